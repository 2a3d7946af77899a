/**
 * The local engine's render cost beside its floor, for text at 480p, 720p and 1080p, image at 720p and
 * reference at 480p, 720p and 1080p (16:9, 5 s), each with the standard and the fast model. The floor is
 * ffmpeg alone encoding the same frames (issue 18): the render's own frames, drawn and kept before timing,
 * written through the same FrameEncoder with the same settings (size, preset, soundtrack), so that what the
 * render costs beyond its floor is the drawing and whatever of it does not overlap the encoding. Each row times
 * its floor and its render alternately (floor, render, floor, render…), so a machine whose load changes during
 * the run moves both alike. CPU time counts this process and its ffmpeg children (Linux: /proc/self/stat's
 * cutime and cstime). Prints one markdown table: wall time and CPU time of the render and of its floor, the
 * ratios, the least wall / floor the render's CPU time allows on this machine's cores (a render cannot end
 * before its CPU time spread over every core has passed), and each fast model's CPU time over its standard
 * model's.
 * Run with `npm run bench:render`. `BENCH_RENDER_RUNS` sets the runs per row, median taken (default 3);
 * `BENCH_RENDER_CASES` picks rows by name, comma-separated (e.g. `text-1080p-standard,reference-480p-fast`).
 * Text and image rows make the engine's own soundtrack (`generate_audio`, on by default); `BENCH_RENDER_SOUND=0`
 * renders them silent, as before the engine had one.
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { type FrameSize, frameSize, type Quality } from '../src/domain/frame-size.js';
import { parseGenerationRequest } from '../src/domain/generation-request.js';
import type { ModelId } from '../src/domain/models.js';
import { FrameEncoder } from '../src/engines/local/frame-encoder.js';
import { LocalEngine } from '../src/engines/local/local-engine.js';
import { createScene, encoderPreset, sceneSettings } from '../src/engines/local/local-render.js';
import { writeSoundtrack } from '../src/engines/local/soundtrack.js';
import { ffmpegPath } from '../src/media/ffmpeg-paths.js';
import { type LocalAsset, OUTPUT_FPS, type RenderJob } from '../src/ports/engine.js';
import { writeTestAudio, writeTestImage, writeTestVideo } from '../test/helpers/media-fixtures.js';

const runs = Number(process.env.BENCH_RENDER_RUNS ?? 3);
const only = process.env.BENCH_RENDER_CASES?.split(',').map((name) => name.trim());
const sound = process.env.BENCH_RENDER_SOUND !== '0';
const DURATION = 5;
/** The cores a render's CPU time can spread over, ffmpeg's threads and this process's together. */
const cores = availableParallelism();
/** Linux's USER_HZ, the unit of /proc/<pid>/stat's times: 100 on every mainstream architecture. */
const CLOCK_TICKS_PER_SECOND = 100;

type Mode = 'text' | 'image' | 'reference';

interface Case {
  readonly name: string;
  readonly mode: Mode;
  readonly quality: Quality;
  readonly fast: boolean;
}

const CASES: readonly Case[] = (
  [
    ['text', '480p'],
    ['text', '720p'],
    ['text', '1080p'],
    ['image', '720p'],
    ['reference', '480p'],
    ['reference', '720p'],
    ['reference', '1080p'],
  ] as const
).flatMap(([mode, quality]) =>
  [false, true].map((fast) => ({
    name: `${mode}-${quality}-${fast ? 'fast' : 'standard'}`,
    mode,
    quality,
    fast,
  })),
);

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

async function once(work: () => Promise<void>): Promise<Cost> {
  const cpuBefore = await cpuMsSoFar();
  const started = performance.now();
  await work();
  const wallMs = performance.now() - started;
  return { wallMs, cpuMs: (await cpuMsSoFar()) - cpuBefore };
}

function median(samples: readonly Cost[]): Cost {
  const middle = (values: number[]): number =>
    values.sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? 0;
  return { wallMs: middle(samples.map((s) => s.wallMs)), cpuMs: middle(samples.map((s) => s.cpuMs)) };
}

/** The job's frames as its scene draws them, each copied out, drawn once before timing. */
async function ownFrames(job: RenderJob, signal: AbortSignal): Promise<Buffer[]> {
  const settings = sceneSettings(job);
  const scene = await createScene(job, settings, ffmpegPath(), signal);
  try {
    const frames: Buffer[] = [];
    for (let index = 0; index < settings.frameCount; index++)
      frames.push(Buffer.from(await scene.render(index)));
    return frames;
  } finally {
    await scene.close();
  }
}

/**
 * The floor: `frames` encoded as the render encodes its own (local-render.ts), soundtrack included (the
 * engine's own written before timing: synthesising it is the render's cost beyond the floor).
 */
async function encodeOnly(
  frames: readonly Buffer[],
  job: RenderJob,
  dir: string,
  soundtrack: string | undefined,
): Promise<void> {
  const reference = job.audios[0]?.path;
  const encoder = new FrameEncoder({
    ffmpegPath: ffmpegPath(),
    outputPath: join(dir, 'floor.mp4'),
    input: sceneSettings(job).frame,
    output: job.frame,
    fps: job.fps,
    frameCount: frames.length,
    preset: encoderPreset(job),
    ...(reference
      ? { audio: { path: reference, generated: false } }
      : soundtrack
        ? { audio: { path: soundtrack, generated: true } }
        : {}),
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

async function fixtures(dir: string): Promise<Record<Mode, Inputs>> {
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

function jobFor(row: Case, inputs: Inputs, dir: string): RenderJob {
  const model: ModelId = `videogen-2.0-${row.fast ? 'fast-' : ''}${row.mode}-to-video`;
  const { model: definition, params } = parseGenerationRequest({
    model,
    prompt: 'a red kite over green hills at sunset, image 1 then video 1',
    duration: DURATION,
    quality: row.quality,
    aspect_ratio: '16:9',
    seed: 7,
    generate_audio: sound,
    ...(inputs.images.length > 0 ? { image_urls: inputs.images.map((a) => a.url) } : {}),
    ...(inputs.videos.length > 0 ? { video_urls: inputs.videos.map((a) => a.url) } : {}),
    ...(inputs.audios.length > 0 ? { audio_urls: inputs.audios.map((a) => a.url) } : {}),
  });
  return {
    taskId: 'bench',
    model: definition,
    params,
    frame: frameSize(row.quality, '16:9'),
    fps: OUTPUT_FPS,
    ...inputs,
    outputPath: join(dir, `${row.name}.mp4`),
    workDir: join(dir, 'work'),
  };
}

async function render(job: RenderJob): Promise<void> {
  await new LocalEngine().render(job, {
    signal: new AbortController().signal,
    deadline: Date.now() + 600_000,
    onProgress: () => {},
  });
}

async function main(): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'videogen-bench-render-'));
  const fmt = (ms: number): string => `${ms.toFixed(0)} ms`;
  const size = (s: FrameSize): string => `${s.width}x${s.height}`;
  try {
    const inputs = await fixtures(dir);
    const cases = CASES.filter((row) => !only || only.includes(row.name));
    console.log(`5 s at ${OUTPUT_FPS} fps, 16:9, median of ${runs} runs, floor and render timed alternately`);
    console.log(
      `| render | wall | CPU | floor | floor wall | floor CPU | wall / floor | CPU / floor | least wall / floor on ${cores} cores | fast / standard CPU |`,
    );
    console.log('|---|---|---|---|---|---|---|---|---|---|');
    const standardCpu = new Map<string, number>();
    for (const row of cases) {
      const job = jobFor(row, inputs[row.mode], dir);
      const frames = await ownFrames(job, new AbortController().signal);
      const soundtrack =
        job.params.generate_audio && job.audios.length === 0 ? join(dir, 'soundtrack.wav') : undefined;
      if (soundtrack) {
        await writeSoundtrack(soundtrack, job.params.prompt, job.params.seed, frames.length / job.fps);
      }
      const floors: Cost[] = [];
      const renders: Cost[] = [];
      for (let i = 0; i < runs; i++) {
        floors.push(await once(() => encodeOnly(frames, job, dir, soundtrack)));
        renders.push(await once(() => render(job)));
      }
      frames.length = 0;
      const floor = median(floors);
      const cost = median(renders);
      const pair = `${row.mode}-${row.quality}`;
      if (!row.fast) standardCpu.set(pair, cost.cpuMs);
      const standard = row.fast ? standardCpu.get(pair) : undefined;
      console.log(
        `| ${[
          row.name,
          fmt(cost.wallMs),
          fmt(cost.cpuMs),
          `\`${encoderPreset(job)}\` from ${size(sceneSettings(job).frame)}${job.audios.length > 0 ? ', soundtrack' : soundtrack ? ', own soundtrack' : ''}`,
          fmt(floor.wallMs),
          fmt(floor.cpuMs),
          (cost.wallMs / floor.wallMs).toFixed(2),
          (cost.cpuMs / floor.cpuMs).toFixed(2),
          (cost.cpuMs / cores / floor.wallMs).toFixed(2),
          standard ? (cost.cpuMs / standard).toFixed(2) : '',
        ].join(' | ')} |`,
      );
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

await main();
