/**
 * Decodes a reference video into raw RGBA frames of the output size with ffmpeg: resampled to the output
 * frame rate, fitted by the same rule as images (fit.ts), looped when shorter than it is needed for.
 * ffmpeg blocks on a full pipe, so frames are decoded only as fast as they are read.
 */
import type { Readable } from 'node:stream';
import { TaskFailure } from '../../domain/errors.js';
import type { FrameSize } from '../../domain/frame-size.js';
import { FfmpegProcess } from '../../media/ffmpeg-process.js';
import { ffmpegFitScaleExpression } from '../../media/fit.js';
import type { LocalAsset } from '../../ports/engine.js';
import { assetLabel } from './still-image.js';

export interface VideoFramesOptions {
  readonly ffmpegPath: string;
  readonly asset: LocalAsset;
  readonly frame: FrameSize;
  readonly fps: number;
  readonly frameCount: number;
  /** What fills the bars around a contained video: a blurred copy of it, or (cheaper) black. */
  readonly fill: 'blur' | 'black';
}

/** Decoded frames held in memory before ffmpeg is paused. */
const BUFFERED_FRAMES = 2;
/** The blurred fill is made at 1/8 size and scaled up, which blurs it further for free. */
const BLUR_DOWNSCALE = 8;

export function videoFilter(frame: FrameSize, fps: number, fill: 'blur' | 'black'): string {
  const { width: w, height: h } = frame;
  const scale = ffmpegFitScaleExpression(w, h);
  // Square pixels first, so anamorphic sources are fitted by their display shape.
  const prepare = `[0:v]fps=${fps},scale=w='round(iw*sar)':h=ih,setsar=1`;
  const fitted = `scale=w='round(iw*${scale})':h='round(ih*${scale})'`;
  if (fill === 'black') {
    // pad then crop: a contained video gets bars, a covering one is cropped, and rounding cannot miss the size.
    return `${prepare},${fitted},format=rgba,pad=w='max(iw,${w})':h='max(ih,${h})':x='(ow-iw)/2':y='(oh-ih)/2':color=black,crop=${w}:${h},setsar=1[out]`;
  }
  const bw = Math.ceil(w / BLUR_DOWNSCALE);
  const bh = Math.ceil(h / BLUR_DOWNSCALE);
  const cover = `max(${bw}/iw,${bh}/ih)`;
  return [
    `${prepare},split=2[bgsrc][fgsrc]`,
    `[bgsrc]scale=w='ceil(iw*${cover})':h='ceil(ih*${cover})',crop=${bw}:${bh},boxblur=3:2,eq=brightness=-0.08,scale=${w}:${h}[bg]`,
    `[fgsrc]${fitted}[fg]`,
    `[bg][fg]overlay=x='(W-w)/2':y='(H-h)/2',setsar=1,format=rgba[out]`,
  ].join(';');
}

export class VideoFrames {
  readonly #process: FfmpegProcess;
  readonly #stdout: Readable;
  readonly #frameBytes: number;
  readonly #label: string;
  readonly #chunks: Buffer[] = [];
  #buffered = 0;
  #streamEnded = false;
  #wake: (() => void) | undefined;
  #framesRead = 0;
  #closed = false;

  constructor(options: VideoFramesOptions) {
    const { asset, frame, fps, frameCount, fill } = options;
    this.#frameBytes = frame.width * frame.height * 4;
    this.#label = assetLabel(asset);
    const args = [
      '-hide_banner',
      '-loglevel',
      'error',
      '-nostdin',
      '-stream_loop',
      '-1',
      '-i',
      asset.path,
      '-an',
      '-sn',
      '-dn',
      '-filter_complex',
      videoFilter(frame, fps, fill),
      '-map',
      '[out]',
      '-frames:v',
      String(frameCount),
      '-f',
      'rawvideo',
      '-pix_fmt',
      'rgba',
      'pipe:1',
    ];
    this.#process = new FfmpegProcess(options.ffmpegPath, args, { stdin: false, stdout: true });
    const stdout = this.#process.child.stdout;
    if (!stdout) throw new Error('ffmpeg has no stdout pipe');
    this.#stdout = stdout;
    // Flowing mode with pause/resume: Readable.read(n) for n larger than what is buffered, awaited in a
    // loop, re-arms 'readable' on the next tick and starves the event loop of the pipe's I/O.
    stdout.on('data', (chunk: Buffer) => {
      this.#chunks.push(chunk);
      this.#buffered += chunk.length;
      if (this.#buffered >= BUFFERED_FRAMES * this.#frameBytes) stdout.pause();
      this.#wakeReader();
    });
    const ended = (): void => {
      this.#streamEnded = true;
      this.#wakeReader();
    };
    stdout.on('end', ended);
    stdout.on('close', ended);
    stdout.on('error', ended);
  }

  /**
   * The next frame, or null once the decoder has no more (it stopped early or was closed).
   * A video that yields no frame at all is `invalid_asset`.
   */
  async next(): Promise<Buffer | null> {
    while (this.#buffered < this.#frameBytes) {
      // A torn last frame, short of a whole one, is dropped.
      if (this.#streamEnded) return this.#ended();
      this.#stdout.resume();
      await new Promise<void>((resolve) => {
        this.#wake = resolve;
      });
    }
    const frame = this.#take(this.#frameBytes);
    if (this.#buffered < BUFFERED_FRAMES * this.#frameBytes && !this.#streamEnded) this.#stdout.resume();
    this.#framesRead++;
    return frame;
  }

  /** Kills the decoder; resolves once it has exited. */
  async close(): Promise<void> {
    this.#closed = true;
    this.#process.kill();
    this.#stdout.destroy();
    this.#wakeReader();
    await this.#process.exited;
  }

  #wakeReader(): void {
    const wake = this.#wake;
    this.#wake = undefined;
    wake?.();
  }

  #take(bytes: number): Buffer {
    const parts: Buffer[] = [];
    let needed = bytes;
    while (needed > 0) {
      const chunk = this.#chunks.shift();
      if (!chunk) throw new Error('video frame buffer underrun');
      if (chunk.length > needed) {
        parts.push(chunk.subarray(0, needed));
        this.#chunks.unshift(chunk.subarray(needed));
        needed = 0;
      } else {
        parts.push(chunk);
        needed -= chunk.length;
      }
    }
    this.#buffered -= bytes;
    return Buffer.concat(parts, bytes);
  }

  async #ended(): Promise<null> {
    const exit = await this.#process.exited;
    if (exit.spawnError) throw new TaskFailure('generation_failed', this.#process.describeExit(exit));
    if (this.#framesRead === 0 && !this.#closed) {
      throw new TaskFailure(
        'invalid_asset',
        `${this.#label}: the video could not be decoded (${this.#process.describeExit(exit)}).`,
      );
    }
    return null;
  }
}
