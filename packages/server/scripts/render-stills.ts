/**
 * Renders example videos with the built-in local engine (480p 16:9, 4 s, seed 7) and writes a few still
 * frames of them as JPEG files into docs/images/local-engine/, for the local engine's doc page: text mode
 * (standard and fast), image mode with two generated pictures, and reference mode with a generated picture
 * and a lavfi `testsrc2` clip. Work files go in a temporary directory removed at the end.
 * Run with `npm run docs:stills`.
 */
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { createCanvas, type SKRSContext2D } from '@napi-rs/canvas';
import { frameSize } from '../src/domain/frame-size.js';
import { parseGenerationRequest } from '../src/domain/generation-request.js';
import type { ModelId } from '../src/domain/models.js';
import { LocalEngine } from '../src/engines/local/local-engine.js';
import { ffmpegPath } from '../src/media/ffmpeg-paths.js';
import { type LocalAsset, OUTPUT_FPS } from '../src/ports/engine.js';

const run = promisify(execFile);
const OUT_DIR = fileURLToPath(new URL('../../../../docs/images/local-engine/', import.meta.url));
const frame = frameSize('480p', '16:9');
const DURATION = 4;
const SEED = 7;
const FRAME_COUNT = DURATION * OUTPUT_FPS;
/** Stills above this size are written again at a lower JPEG quality. */
const MAX_STILL_BYTES = 80 * 1024;

interface Inputs {
  readonly images: readonly LocalAsset[];
  readonly videos: readonly LocalAsset[];
}

interface Still {
  readonly file: string;
  /** The frame's index in the video; frame i is shown from i / OUTPUT_FPS seconds. */
  readonly frame: number;
}

const atSeconds = (seconds: number): number => Math.min(FRAME_COUNT - 1, Math.round(seconds * OUTPUT_FPS));

/** A small deterministic generator (mulberry32), so the generated pictures are the same on every run. */
function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** A hill line across the whole width: a sum of two sine waves around `base` (a fraction of the height). */
function hill(
  ctx: SKRSContext2D,
  width: number,
  height: number,
  base: number,
  wave: number,
  phase: number,
  fill: string,
): void {
  ctx.beginPath();
  ctx.moveTo(0, height);
  for (let x = 0; x <= width; x += 8) {
    const u = x / width;
    const y = base + wave * Math.sin(u * 5 + phase) + wave * 0.5 * Math.sin(u * 13 + phase * 2);
    ctx.lineTo(x, y * height);
  }
  ctx.lineTo(width, height);
  ctx.closePath();
  ctx.fillStyle = fill;
  ctx.fill();
}

/** A daytime picture: a sky gradient into a warm horizon, a low sun with a glow, and layered green hills. */
async function writeDayPicture(path: string, width: number, height: number): Promise<void> {
  const canvas = createCanvas(width, height);
  const ctx = canvas.getContext('2d');
  const sky = ctx.createLinearGradient(0, 0, 0, height);
  sky.addColorStop(0, '#2f6fd0');
  sky.addColorStop(0.55, '#8fc3f0');
  sky.addColorStop(0.8, '#ffd9a0');
  ctx.fillStyle = sky;
  ctx.fillRect(0, 0, width, height);
  const sunX = width * 0.68;
  const sunY = height * 0.42;
  const sunR = height * 0.09;
  const glow = ctx.createRadialGradient(sunX, sunY, sunR * 0.5, sunX, sunY, sunR * 4);
  glow.addColorStop(0, 'rgba(255, 240, 170, 0.9)');
  glow.addColorStop(1, 'rgba(255, 240, 170, 0)');
  ctx.fillStyle = glow;
  ctx.fillRect(0, 0, width, height);
  ctx.fillStyle = '#fff3b0';
  ctx.beginPath();
  ctx.arc(sunX, sunY, sunR, 0, Math.PI * 2);
  ctx.fill();
  ctx.fillStyle = 'rgba(255, 255, 255, 0.85)';
  for (const [cx, cy, s] of [
    [0.2, 0.2, 1],
    [0.45, 0.12, 0.7],
  ] as const) {
    for (const [dx, dy, r] of [
      [0, 0, 0.05],
      [0.05, -0.02, 0.06],
      [0.1, 0, 0.045],
    ] as const) {
      ctx.beginPath();
      ctx.arc((cx + dx * s) * width, (cy + dy * s) * height, r * s * height, 0, Math.PI * 2);
      ctx.fill();
    }
  }
  hill(ctx, width, height, 0.62, 0.05, 1.2, '#6fae5a');
  hill(ctx, width, height, 0.72, 0.04, 3.1, '#4c8f3e');
  hill(ctx, width, height, 0.84, 0.03, 0.4, '#2f6b2a');
  // A tree on the nearest hill.
  const treeX = width * 0.22;
  const treeY = height * 0.83;
  ctx.fillStyle = '#5a3a1e';
  ctx.fillRect(treeX - width * 0.006, treeY - height * 0.1, width * 0.012, height * 0.1);
  ctx.fillStyle = '#1f5220';
  ctx.beginPath();
  ctx.arc(treeX, treeY - height * 0.13, height * 0.06, 0, Math.PI * 2);
  ctx.fill();
  await writeFile(path, await canvas.encode('jpeg', 92));
}

/** A night picture: a dark blue sky with stars, a crescent moon, dark hills and the moon's light on a lake. */
async function writeNightPicture(path: string, width: number, height: number): Promise<void> {
  const canvas = createCanvas(width, height);
  const ctx = canvas.getContext('2d');
  const sky = ctx.createLinearGradient(0, 0, 0, height);
  sky.addColorStop(0, '#050a24');
  sky.addColorStop(0.6, '#1b2a66');
  sky.addColorStop(0.75, '#34407a');
  ctx.fillStyle = sky;
  ctx.fillRect(0, 0, width, height);
  const next = random(SEED);
  for (let i = 0; i < 160; i++) {
    const x = next() * width;
    const y = next() * height * 0.6;
    const r = 0.6 + next() * 1.8;
    ctx.fillStyle = `rgba(255, 255, 240, ${0.4 + next() * 0.6})`;
    ctx.beginPath();
    ctx.arc(x, y, r, 0, Math.PI * 2);
    ctx.fill();
  }
  const moonX = width * 0.3;
  const moonY = height * 0.25;
  const moonR = height * 0.08;
  const glow = ctx.createRadialGradient(moonX, moonY, moonR, moonX, moonY, moonR * 4);
  glow.addColorStop(0, 'rgba(200, 210, 255, 0.35)');
  glow.addColorStop(1, 'rgba(200, 210, 255, 0)');
  ctx.fillStyle = glow;
  ctx.fillRect(0, 0, width, height);
  // The crescent: the moon's disc, less an offset disc, so the glowing sky shows through the cut.
  ctx.save();
  ctx.beginPath();
  ctx.arc(moonX, moonY, moonR, 0, Math.PI * 2);
  ctx.clip();
  ctx.beginPath();
  ctx.rect(0, 0, width, height);
  ctx.arc(moonX + moonR * 0.45, moonY - moonR * 0.2, moonR * 0.9, 0, Math.PI * 2);
  ctx.fillStyle = '#f4f1d8';
  ctx.fill('evenodd');
  ctx.restore();
  hill(ctx, width, height, 0.66, 0.06, 2.0, '#121a3a');
  hill(ctx, width, height, 0.72, 0.03, 4.5, '#0b1128');
  // A lake with the moon's reflection.
  ctx.fillStyle = '#0a1540';
  ctx.fillRect(0, height * 0.8, width, height * 0.2);
  ctx.fillStyle = 'rgba(244, 241, 216, 0.5)';
  for (let i = 0; i < 6; i++) {
    const w = moonR * (1.6 - i * 0.2);
    ctx.fillRect(moonX - w / 2, height * (0.82 + i * 0.028), w, height * 0.008);
  }
  await writeFile(path, await canvas.encode('png'));
}

/** A 640x360, 2 s H.264 clip of lavfi's `testsrc2`. */
async function writeClip(path: string): Promise<void> {
  await run(ffmpegPath(), [
    ...['-v', 'error', '-nostdin', '-y', '-f', 'lavfi'],
    ...['-i', 'testsrc2=size=640x360:rate=30:duration=2'],
    ...['-c:v', 'libx264', '-preset', 'ultrafast', '-pix_fmt', 'yuv420p', path],
  ]);
}

async function render(
  model: ModelId,
  prompt: string,
  inputs: Inputs,
  dir: string,
  name: string,
): Promise<string> {
  const { model: definition, params } = parseGenerationRequest({
    model,
    prompt,
    duration: DURATION,
    quality: '480p',
    aspect_ratio: '16:9',
    seed: SEED,
    ...(inputs.images.length > 0 ? { image_urls: inputs.images.map((a) => a.url) } : {}),
    ...(inputs.videos.length > 0 ? { video_urls: inputs.videos.map((a) => a.url) } : {}),
  });
  const outputPath = join(dir, `${name}.mp4`);
  await new LocalEngine().render(
    {
      taskId: `docs-${name}`,
      model: definition,
      params,
      frame,
      fps: OUTPUT_FPS,
      images: inputs.images,
      videos: inputs.videos,
      audios: [],
      outputPath,
      workDir: join(dir, `work-${name}`),
    },
    { signal: new AbortController().signal, deadline: Date.now() + 600_000, onProgress: () => {} },
  );
  return outputPath;
}

/**
 * Writes frame `still.frame` of `video` as a JPEG, picked by its index so the first and last frames are
 * exact; the quality drops (ffmpeg's -q:v 3 upward) until the file is under MAX_STILL_BYTES.
 */
async function writeStill(video: string, still: Still): Promise<number> {
  const path = join(OUT_DIR, still.file);
  for (let q = 3; ; q++) {
    await run(ffmpegPath(), [
      ...['-v', 'error', '-nostdin', '-y', '-i', video],
      ...['-vf', `select=eq(n\\,${still.frame})`, '-frames:v', '1', '-q:v', String(q), path],
    ]);
    const { size } = await stat(path);
    if (size <= MAX_STILL_BYTES || q >= 12) return size;
  }
}

function asset(
  field: LocalAsset['field'],
  index: number,
  path: string,
  extra: Partial<LocalAsset>,
): LocalAsset {
  return { field, index, url: `https://docs.test/${field}/${index}`, path, ...extra };
}

async function main(): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'videogen-docs-stills-'));
  try {
    await mkdir(OUT_DIR, { recursive: true });
    const day = join(dir, 'day.jpg');
    const night = join(dir, 'night.png');
    const clip = join(dir, 'clip.mp4');
    await Promise.all([
      writeDayPicture(day, 1280, 720),
      writeNightPicture(night, 1024, 768),
      writeClip(clip),
    ]);
    const none: Inputs = { images: [], videos: [] };
    const dayAsset = asset('image_urls', 0, day, { width: 1280, height: 720 });
    const jobs: {
      model: ModelId;
      prompt: string;
      inputs: Inputs;
      name: string;
      stills: Still[];
    }[] = [
      {
        model: 'videogen-2.0-text-to-video',
        prompt: 'a red kite over green hills at sunset',
        inputs: none,
        name: 'text-kite',
        stills: [
          { file: 'text-kite-0.5s.jpg', frame: atSeconds(0.5) },
          { file: 'text-kite-3s.jpg', frame: atSeconds(3) },
        ],
      },
      {
        model: 'videogen-2.0-text-to-video',
        prompt: 'rain over a neon city at night, purple and cyan',
        inputs: none,
        name: 'text-rain-standard',
        stills: [{ file: 'text-rain-standard.jpg', frame: atSeconds(2) }],
      },
      {
        model: 'videogen-2.0-fast-text-to-video',
        prompt: 'rain over a neon city at night, purple and cyan',
        inputs: none,
        name: 'text-rain-fast',
        stills: [{ file: 'text-rain-fast.jpg', frame: atSeconds(2) }],
      },
      {
        model: 'videogen-2.0-image-to-video',
        prompt: 'a sunny valley turning into a moonlit night',
        inputs: {
          images: [dayAsset, asset('image_urls', 1, night, { width: 1024, height: 768 })],
          videos: [],
        },
        name: 'image',
        stills: [
          { file: 'image-first.jpg', frame: 0 },
          { file: 'image-middle.jpg', frame: FRAME_COUNT / 2 },
          { file: 'image-last.jpg', frame: FRAME_COUNT - 1 },
        ],
      },
      {
        model: 'videogen-2.0-reference-to-video',
        prompt: 'video 1 then image 1',
        inputs: {
          images: [dayAsset],
          videos: [asset('video_urls', 0, clip, { width: 640, height: 360, duration: 2 })],
        },
        name: 'reference',
        stills: [
          { file: 'reference-1s.jpg', frame: atSeconds(1) },
          { file: 'reference-3s.jpg', frame: atSeconds(3) },
        ],
      },
    ];
    for (const job of jobs) {
      const video = await render(job.model, job.prompt, job.inputs, dir, job.name);
      for (const still of job.stills) {
        const size = await writeStill(video, still);
        const seconds = (still.frame / OUTPUT_FPS).toFixed(2);
        console.log(`${still.file}: ${job.model}, frame ${still.frame} (${seconds} s), ${size} bytes`);
      }
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

await main();
