/** What a test needs to know about an MP4: probed streams, top-level box order, and the colour of a frame. */
import { execFile } from 'node:child_process';
import { open } from 'node:fs/promises';
import { promisify } from 'node:util';
import type { FrameSize } from '../../src/domain/frame-size.js';
import { ffmpegPath } from '../../src/media/ffmpeg-paths.js';
import { type ProbedStream, probe } from '../../src/media/probe.js';

const run = promisify(execFile);

export type Rgb = readonly [r: number, g: number, b: number];

export interface Mp4Facts {
  /** Container duration, seconds. */
  readonly duration: number;
  readonly format: string;
  readonly video: ProbedStream | undefined;
  readonly audio: ProbedStream | undefined;
  readonly boxes: readonly string[];
  /** The `moov` atom comes before `mdat` ("faststart"). */
  readonly moovBeforeMdat: boolean;
}

/** The types of the file's top-level ISO BMFF boxes, in order. */
export async function topLevelBoxes(path: string): Promise<string[]> {
  const file = await open(path, 'r');
  try {
    const { size: fileSize } = await file.stat();
    const header = Buffer.alloc(16);
    const boxes: string[] = [];
    let offset = 0;
    while (offset + 8 <= fileSize) {
      await file.read(header, 0, 16, offset);
      let size = header.readUInt32BE(0);
      const type = header.toString('latin1', 4, 8);
      if (size === 1) size = Number(header.readBigUInt64BE(8));
      else if (size === 0) size = fileSize - offset;
      if (size < 8) throw new Error(`bad box size ${size} for ${type} at ${offset}`);
      boxes.push(type);
      offset += size;
    }
    return boxes;
  } finally {
    await file.close();
  }
}

export async function mp4Facts(path: string): Promise<Mp4Facts> {
  const [probed, boxes] = await Promise.all([probe(path), topLevelBoxes(path)]);
  const moov = boxes.indexOf('moov');
  const mdat = boxes.indexOf('mdat');
  return {
    duration: probed.duration,
    format: probed.format,
    video: probed.streams.find((s) => s.type === 'video'),
    audio: probed.streams.find((s) => s.type === 'audio'),
    boxes,
    moovBeforeMdat: moov >= 0 && mdat >= 0 && moov < mdat,
  };
}

/** Mean colour of packed RGB (3 channels) or RGBA (4) pixels. */
export function meanColour(pixels: Uint8Array, channels: 3 | 4): Rgb {
  let r = 0;
  let g = 0;
  let b = 0;
  const count = Math.floor(pixels.length / channels);
  for (let i = 0; i < count * channels; i += channels) {
    r += pixels[i] ?? 0;
    g += pixels[i + 1] ?? 0;
    b += pixels[i + 2] ?? 0;
  }
  return [r / count, g / count, b / count];
}

/** Euclidean distance in RGB, 0..441. */
export function colourDistance(a: Rgb, b: Rgb): number {
  return Math.hypot(a[0] - b[0], a[1] - b[1], a[2] - b[2]);
}

/** Frame `index` (0-based) of a video, decoded by ffmpeg and shrunk to `size` x `size` RGB pixels. */
export async function framePixels(path: string, index: number, size = 32): Promise<Buffer> {
  const { stdout } = await run(
    ffmpegPath(),
    [
      ...['-v', 'error', '-nostdin', '-i', path],
      ...['-vf', `select=eq(n\\,${index}),scale=${size}:${size}`, '-vsync', '0', '-frames:v', '1'],
      ...['-f', 'rawvideo', '-pix_fmt', 'rgb24', 'pipe:1'],
    ],
    { encoding: 'buffer', maxBuffer: 16 * 1024 * 1024 },
  );
  if (stdout.length !== size * size * 3) throw new Error(`frame ${index} of ${path} was not decoded`);
  return stdout;
}

/** Frame `index` of a video as packed RGB of `size` (scaled by ffmpeg's default bicubic when it differs). */
export async function fullFrame(path: string, index: number, size: FrameSize): Promise<Buffer> {
  const { stdout } = await run(
    ffmpegPath(),
    [
      ...['-v', 'error', '-nostdin', '-i', path],
      ...[
        '-vf',
        `select=eq(n\\,${index}),scale=${size.width}:${size.height}`,
        '-vsync',
        '0',
        '-frames:v',
        '1',
      ],
      ...['-f', 'rawvideo', '-pix_fmt', 'rgb24', 'pipe:1'],
    ],
    { encoding: 'buffer', maxBuffer: 64 * 1024 * 1024 },
  );
  if (stdout.length !== size.width * size.height * 3)
    throw new Error(`frame ${index} of ${path} was not decoded`);
  return stdout;
}

export interface Region {
  readonly x: number;
  readonly y: number;
  readonly width: number;
  readonly height: number;
}

/** Peak signal-to-noise ratio in dB of two packed RGB pictures `width` pixels wide, over `region` or all of them. */
export function psnr(a: Buffer, b: Buffer, width: number, region?: Region): number {
  const height = a.length / 3 / width;
  const { x, y, width: w, height: h } = region ?? { x: 0, y: 0, width, height };
  let sum = 0;
  let count = 0;
  for (let row = Math.max(0, Math.ceil(y)); row < Math.min(height, Math.floor(y + h)); row++) {
    for (let col = Math.max(0, Math.ceil(x)); col < Math.min(width, Math.floor(x + w)); col++) {
      for (let c = 0; c < 3; c++) {
        const i = (row * width + col) * 3 + c;
        const d = (a[i] ?? 0) - (b[i] ?? 0);
        sum += d * d;
        count++;
      }
    }
  }
  const mse = sum / count;
  return mse === 0 ? Number.POSITIVE_INFINITY : 10 * Math.log10((255 * 255) / mse);
}

/** Mean absolute difference per channel of two packed pictures, 0..255. */
export function meanDifference(a: Buffer, b: Buffer): number {
  let sum = 0;
  for (let i = 0; i < a.length; i++) sum += Math.abs((a[i] ?? 0) - (b[i] ?? 0));
  return sum / a.length;
}

/** Integrated loudness (EBU R128, LUFS) of the file's first audio stream, measured by ffmpeg's ebur128. */
export async function integratedLoudness(path: string): Promise<number> {
  const { stderr } = await run(ffmpegPath(), [
    ...['-nostdin', '-hide_banner', '-i', path, '-map', '0:a:0'],
    ...['-af', 'ebur128', '-f', 'null', '-'],
  ]);
  const values = [...stderr.matchAll(/I:\s+(-?[\d.]+) LUFS/g)].map((m) => Number(m[1]));
  const last = values.at(-1);
  if (last === undefined) throw new Error(`no loudness summary for ${path}`);
  return last;
}

export async function frameMeanColour(path: string, index: number): Promise<Rgb> {
  return meanColour(await framePixels(path, index), 3);
}

/** The file's first audio stream decoded, as 8 kHz mono 16-bit samples. */
export async function decodedAudio(path: string): Promise<Buffer> {
  const { stdout } = await run(
    ffmpegPath(),
    [
      '-v',
      'error',
      '-nostdin',
      '-i',
      path,
      '-map',
      '0:a:0',
      '-ac',
      '1',
      '-ar',
      '8000',
      '-f',
      's16le',
      'pipe:1',
    ],
    { encoding: 'buffer', maxBuffer: 64 * 1024 * 1024 },
  );
  return stdout;
}

/** Seconds of audio in the file's first audio stream, counted from decoded samples (8 kHz, 16-bit). */
export async function audioSeconds(path: string): Promise<number> {
  return (await decodedAudio(path)).length / 2 / 8000;
}
