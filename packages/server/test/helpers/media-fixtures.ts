/** Small media files for tests: strongly coloured images, a test-pattern video and a sine-tone audio file. */
import { execFile } from 'node:child_process';
import { readFile, writeFile } from 'node:fs/promises';
import { extname } from 'node:path';
import { promisify } from 'node:util';
import { createCanvas, loadImage } from '@napi-rs/canvas';
import type { FrameSize } from '../../src/domain/frame-size.js';
import { ffmpegPath } from '../../src/media/ffmpeg-paths.js';
import { chooseFit, fitRect, type Rect } from '../../src/media/fit.js';
import { meanColour, type Rgb } from './mp4-facts.js';

const run = promisify(execFile);

export interface TestImageOptions {
  readonly width: number;
  readonly height: number;
  /** The dominant colour. */
  readonly colour: Rgb;
  /** A few shapes in this colour make the image more than a flat fill; they cover a small area. */
  readonly accent?: Rgb;
  /** Chosen from the file extension (.png, .jpg/.jpeg, .webp) when not given. */
  readonly format?: 'png' | 'jpeg' | 'webp';
  /** Detail for picture comparisons: a gradient towards `accent` and a grid of bars over the field. */
  readonly textured?: boolean;
}

function formatOf(path: string): 'png' | 'jpeg' | 'webp' {
  const ext = extname(path).toLowerCase();
  if (ext === '.jpg' || ext === '.jpeg') return 'jpeg';
  if (ext === '.webp') return 'webp';
  return 'png';
}

const rgb = ([r, g, b]: Rgb): string => `rgb(${r}, ${g}, ${b})`;

/** Writes an image at `path`: a `colour` field with small `accent` circles. */
export async function writeTestImage(path: string, options: TestImageOptions): Promise<void> {
  const { width, height } = options;
  const canvas = createCanvas(width, height);
  const ctx = canvas.getContext('2d');
  ctx.fillStyle = rgb(options.colour);
  if (options.textured) {
    const gradient = ctx.createLinearGradient(0, 0, width, height);
    gradient.addColorStop(0, rgb(options.colour));
    gradient.addColorStop(1, rgb(options.accent ?? [255, 255, 255]));
    ctx.fillStyle = gradient;
  }
  ctx.fillRect(0, 0, width, height);
  if (options.textured) {
    const step = Math.max(8, Math.round(Math.min(width, height) / 10));
    ctx.fillStyle = 'rgba(255, 255, 255, 0.35)';
    for (let x = 0; x < width; x += step) ctx.fillRect(x, 0, step / 4, height);
    ctx.fillStyle = 'rgba(0, 0, 0, 0.3)';
    for (let y = 0; y < height; y += step * 1.5) ctx.fillRect(0, y, width, step / 3);
  }
  if (options.accent) {
    ctx.fillStyle = rgb(options.accent);
    const radius = Math.min(width, height) / 12;
    for (const [fx, fy] of [
      [0.25, 0.3],
      [0.7, 0.6],
      [0.45, 0.75],
    ] as const) {
      ctx.beginPath();
      ctx.arc(width * fx, height * fy, radius, 0, Math.PI * 2);
      ctx.fill();
    }
  }
  const format = options.format ?? formatOf(path);
  const bytes = format === 'png' ? await canvas.encode('png') : await canvas.encode(format, 92);
  await writeFile(path, bytes);
}

/** Mean colour of an image file, decoded the way the local engine decodes it. */
export async function imageMeanColour(path: string): Promise<Rgb> {
  const image = await loadImage(await readFile(path));
  const canvas = createCanvas(image.width, image.height);
  const ctx = canvas.getContext('2d');
  ctx.drawImage(image, 0, 0);
  const { data } = ctx.getImageData(0, 0, image.width, image.height);
  return meanColour(new Uint8Array(data.buffer, data.byteOffset, data.byteLength), 4);
}

/**
 * What a frame showing the image untouched (no zoom) looks like: the image fitted to `frame` by the local
 * engine's rule, on black, as packed RGB; `rect` is where the picture is (outside it the engine draws a fill).
 */
export async function expectedStill(
  path: string,
  frame: FrameSize,
): Promise<{ readonly pixels: Buffer; readonly rect: Rect }> {
  const image = await loadImage(await readFile(path));
  const mode = chooseFit(image.width, image.height, frame.width, frame.height);
  const rect = fitRect(image.width, image.height, frame.width, frame.height, mode);
  const canvas = createCanvas(frame.width, frame.height);
  const ctx = canvas.getContext('2d');
  ctx.fillStyle = '#000';
  ctx.fillRect(0, 0, frame.width, frame.height);
  ctx.imageSmoothingQuality = 'high';
  ctx.drawImage(image, rect.x, rect.y, rect.width, rect.height);
  const rgba = canvas.data();
  const pixels = Buffer.alloc(frame.width * frame.height * 3);
  for (let i = 0, j = 0; i < rgba.length; i += 4, j += 3) {
    pixels[j] = rgba[i] ?? 0;
    pixels[j + 1] = rgba[i + 1] ?? 0;
    pixels[j + 2] = rgba[i + 2] ?? 0;
  }
  return { pixels, rect };
}

export interface TestVideoOptions {
  readonly width?: number;
  readonly height?: number;
  readonly seconds?: number;
  readonly fps?: number;
  /** A flat colour (an ffmpeg colour name or 0xRRGGBB) instead of the `testsrc` pattern. */
  readonly colour?: string;
  /** yuv420p unless given; yuv444p allows odd sizes. */
  readonly pixelFormat?: string;
  /** Width of a pixel over its height, for anamorphic video. */
  readonly sampleAspectRatio?: number;
}

/** Writes a short H.264 MP4 at `path` from ffmpeg's lavfi `testsrc` (or a flat colour). */
export async function writeTestVideo(path: string, options: TestVideoOptions = {}): Promise<void> {
  const { width = 320, height = 240, seconds = 2, fps = 30 } = options;
  const source = options.colour
    ? `color=c=${options.colour}:size=${width}x${height}:rate=${fps}:duration=${seconds}`
    : `testsrc=size=${width}x${height}:rate=${fps}:duration=${seconds}`;
  const { pixelFormat = 'yuv420p', sampleAspectRatio } = options;
  await run(ffmpegPath(), [
    ...['-v', 'error', '-nostdin', '-y', '-f', 'lavfi', '-i', source],
    ...(sampleAspectRatio ? ['-vf', `setsar=${sampleAspectRatio}`] : []),
    ...['-c:v', 'libx264', '-preset', 'ultrafast', '-pix_fmt', pixelFormat, path],
  ]);
}

export interface TestAudioOptions {
  readonly seconds?: number;
  readonly frequency?: number;
  /** Gain in dB on ffmpeg's sine source, whose peak is 1/8 of full scale (-18 dBFS). */
  readonly gainDb?: number;
}

/** Writes a sine tone at `path`; the extension picks the format (.wav PCM, .m4a AAC, .mp3 …). */
export async function writeTestAudio(path: string, options: TestAudioOptions = {}): Promise<void> {
  const { seconds = 1.5, frequency = 440, gainDb } = options;
  const codec = extname(path).toLowerCase() === '.m4a' ? ['-c:a', 'aac'] : [];
  await run(ffmpegPath(), [
    ...['-v', 'error', '-nostdin', '-y', '-f', 'lavfi'],
    ...['-i', `sine=frequency=${frequency}:sample_rate=44100:duration=${seconds}`],
    ...(gainDb === undefined ? [] : ['-af', `volume=${gainDb}dB`]),
    ...codec,
    path,
  ]);
}
