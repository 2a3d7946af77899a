/**
 * The local engine's render cost: a 5 s 720p video for each of the six models, beside the floor for this
 * engine, which is ffmpeg encoding the same number of ready-made frames of a synthetic source (lavfi
 * `testsrc2`, decoded to RGBA before timing) through the same FrameEncoder with the same settings: the
 * standard models' preset at full size, the fast models' preset from the fast scene size (scene.ts).
 * CPU time counts this process and its ffmpeg children (Linux: /proc/self/stat's cutime and cstime).
 * Prints one markdown table: wall time, CPU time, the ratio to the floor, and fast/standard CPU ratios.
 * Run with `npm run bench:render` (`BENCH_RENDER_RUNS` sets the runs per row, median taken; default 3).
 */
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { type FrameSize, frameSize } from '../src/domain/frame-size.js';
import { parseGenerationRequest } from '../src/domain/generation-request.js';
import type { ModelId } from '../src/domain/models.js';
import { type EncoderPreset, FrameEncoder } from '../src/engines/local/frame-encoder.js';
import { LocalEngine } from '../src/engines/local/local-engine.js';
import { sceneFrame } from '../src/engines/local/scene.js';
import { ffmpegPath } from '../src/media/ffmpeg-paths.js';
import { type LocalAsset, OUTPUT_FPS } from '../src/ports/engine.js';
import { writeTestAudio, writeTestImage, writeTestVideo } from '../test/helpers/media-fixtures.js';

const run = promisify(execFile);
const runs = Number(process.env.BENCH_RENDER_RUNS ?? 3);
const frame = frameSize('720p', '16:9');
const DURATION = 5;
const frameCount = DURATION * OUTPUT_FPS;
/** Linux's USER_HZ, the unit of /proc/<pid>/stat's times: 100 on every mainstream architecture. */
const CLOCK_TICKS_PER_SECOND = 100;

interface Cost {
  readonly wallMs: number;
  readonly cpuMs: number;
}

/** CPU milliseconds used so far by this process and by its children that have exited. */
async function cpuMsSoFar(): Promise<number> {
  const stat = await readFile('/proc/self/stat', 'utf8');
  // Fields after the parenthesised command name; cutime and cstime are fields 16 and 17 (1-based).
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const children = Number(fields[13]) + Number(fields[14]);
  const self = process.cpuUsage();
  return (self.user + self.system) / 1000 + (children * 1000) / CLOCK_TICKS_PER_SECOND;
}

async function measure(work: () => Promise<void>): Promise<Cost> {
  const samples: Cost[] = [];
  for (let i = 0; i < runs; i++) {
    const cpuBefore = await cpuMsSoFar();
    const started = performance.now();
    await work();
    const wallMs = performance.now() - started;
    samples.push({ wallMs, cpuMs: (await cpuMsSoFar()) - cpuBefore });
  }
  const median = (values: number[]): number =>
    values.sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? 0;
  return { wallMs: median(samples.map((s) => s.wallMs)), cpuMs: median(samples.map((s) => s.cpuMs)) };
}

/** `frameCount` RGBA frames of lavfi's testsrc2 at `size`, decoded once. */
async function syntheticFrames(size: FrameSize): Promise<Buffer[]> {
  const { stdout } = await run(
    ffmpegPath(),
    [
      ...['-v', 'error', '-nostdin', '-f', 'lavfi'],
      ...['-i', `testsrc2=size=${size.width}x${size.height}:rate=${OUTPUT_FPS}`],
      ...['-frames:v', String(frameCount), '-f', 'rawvideo', '-pix_fmt', 'rgba', 'pipe:1'],
    ],
    { encoding: 'buffer', maxBuffer: frameCount * size.width * size.height * 4 + 1024 },
  );
  const bytes = size.width * size.height * 4;
  return Array.from({ length: frameCount }, (_, i) => stdout.subarray(i * bytes, (i + 1) * bytes));
}

async function encodeOnly(
  frames: readonly Buffer[],
  input: FrameSize,
  preset: EncoderPreset,
  dir: string,
): Promise<void> {
  const encoder = new FrameEncoder({
    ffmpegPath: ffmpegPath(),
    outputPath: join(dir, `floor-${preset}.mp4`),
    input,
    output: frame,
    fps: OUTPUT_FPS,
    frameCount,
    preset,
  });
  for (const pixels of frames) await encoder.write(pixels);
  await encoder.finish();
}

interface Inputs {
  readonly images: readonly LocalAsset[];
  readonly videos: readonly LocalAsset[];
  readonly audios: readonly LocalAsset[];
}

function asset(field: LocalAsset['field'], index: number, path: string): LocalAsset {
  return { field, index, url: `https://bench.test/${field}/${index}`, path };
}

async function fixtures(dir: string): Promise<Record<'text' | 'image' | 'reference', Inputs>> {
  const first = join(dir, 'first.jpg');
  const last = join(dir, 'last.png');
  const clip = join(dir, 'clip.mp4');
  const tone = join(dir, 'tone.m4a');
  await Promise.all([
    writeTestImage(first, { width: 1920, height: 1080, colour: [40, 90, 200], accent: [250, 200, 60] }),
    writeTestImage(last, { width: 1200, height: 900, colour: [200, 60, 40], accent: [60, 200, 120] }),
    writeTestVideo(clip, { width: 640, height: 360, seconds: 3 }),
    writeTestAudio(tone, { seconds: 3 }),
  ]);
  const none: readonly LocalAsset[] = [];
  return {
    text: { images: none, videos: none, audios: none },
    image: {
      images: [asset('image_urls', 0, first), asset('image_urls', 1, last)],
      videos: none,
      audios: none,
    },
    reference: {
      images: [asset('image_urls', 0, first)],
      videos: [asset('video_urls', 0, clip)],
      audios: [asset('audio_urls', 0, tone)],
    },
  };
}

async function render(model: ModelId, inputs: Inputs, dir: string): Promise<void> {
  const { model: definition, params } = parseGenerationRequest({
    model,
    prompt: 'a red kite over green hills at sunset, image 1 then video 1',
    duration: DURATION,
    quality: '720p',
    aspect_ratio: '16:9',
    seed: 7,
    ...(inputs.images.length > 0 ? { image_urls: inputs.images.map((a) => a.url) } : {}),
    ...(inputs.videos.length > 0 ? { video_urls: inputs.videos.map((a) => a.url) } : {}),
    ...(inputs.audios.length > 0 ? { audio_urls: inputs.audios.map((a) => a.url) } : {}),
  });
  await new LocalEngine().render(
    {
      taskId: 'bench',
      model: definition,
      params,
      frame,
      fps: OUTPUT_FPS,
      ...inputs,
      outputPath: join(dir, `${model}.mp4`),
      workDir: join(dir, 'work'),
    },
    { signal: new AbortController().signal, deadline: Date.now() + 600_000, onProgress: () => {} },
  );
}

const MODES = ['text', 'image', 'reference'] as const;

async function main(): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'videogen-bench-render-'));
  try {
    const inputs = await fixtures(dir);
    const fastFrame = sceneFrame(frame, true);
    const fullFrames = await syntheticFrames(frame);
    const standardFloor = await measure(() => encodeOnly(fullFrames, frame, 'veryfast', dir));
    fullFrames.length = 0;
    const fastFrames = await syntheticFrames(fastFrame);
    const fastFloor = await measure(() => encodeOnly(fastFrames, fastFrame, 'ultrafast', dir));
    fastFrames.length = 0;
    const floor: Record<EncoderPreset, Cost> = { ultrafast: fastFloor, veryfast: standardFloor };
    const rows: string[][] = [];
    const fmt = (ms: number): string => `${ms.toFixed(0)} ms`;
    const size = (s: FrameSize): string => `${s.width}x${s.height}`;
    rows.push(
      [
        `floor, standard: ffmpeg alone, veryfast, from ${size(frame)}`,
        fmt(standardFloor.wallMs),
        fmt(standardFloor.cpuMs),
        '1.00',
        '1.00',
        '',
      ],
      [
        `floor, fast: ffmpeg alone, ultrafast, from ${size(fastFrame)}`,
        fmt(fastFloor.wallMs),
        fmt(fastFloor.cpuMs),
        '1.00',
        '1.00',
        '',
      ],
    );
    for (const mode of MODES) {
      const standard = await measure(() => render(`videogen-2.0-${mode}-to-video`, inputs[mode], dir));
      const fast = await measure(() => render(`videogen-2.0-fast-${mode}-to-video`, inputs[mode], dir));
      for (const [name, cost, preset] of [
        [`videogen-2.0-${mode}-to-video`, standard, 'veryfast'],
        [`videogen-2.0-fast-${mode}-to-video`, fast, 'ultrafast'],
      ] as const) {
        rows.push([
          name,
          fmt(cost.wallMs),
          fmt(cost.cpuMs),
          (cost.wallMs / floor[preset].wallMs).toFixed(2),
          (cost.cpuMs / floor[preset].cpuMs).toFixed(2),
          name.includes('-fast-') ? (fast.cpuMs / standard.cpuMs).toFixed(2) : '',
        ]);
      }
    }
    console.log(`5 s of ${frame.width}x${frame.height} at ${OUTPUT_FPS} fps, median of ${runs} runs`);
    console.log('| render | wall | CPU | wall / floor | CPU / floor | fast / standard CPU |');
    console.log('|---|---|---|---|---|---|');
    for (const row of rows) console.log(`| ${row.join(' | ')} |`);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

await main();
