/**
 * Encodes raw RGBA frames written to ffmpeg's stdin into the result MP4 (docs/decisions.md#result-videos):
 * H.264 yuv420p, moov first, optional AAC soundtrack: an audio reference looped or trimmed to the video,
 * loudness-normalised and faded out at the end, or the engine's own (soundtrack.ts), already the video's length
 * and level.
 */
import type { Writable } from 'node:stream';
import { TaskFailure } from '../../domain/errors.js';
import type { FrameSize } from '../../domain/frame-size.js';
import { FfmpegProcess } from '../../media/ffmpeg-process.js';

export type EncoderPreset = 'ultrafast' | 'veryfast';

export interface FrameEncoderOptions {
  readonly ffmpegPath: string;
  readonly outputPath: string;
  /** The size of the frames written. */
  readonly input: FrameSize;
  /** The size of the video; frames of another size are scaled to it (bilinear). */
  readonly output: FrameSize;
  readonly fps: number;
  readonly frameCount: number;
  readonly preset: EncoderPreset;
  /** The soundtrack: an audio reference, or the engine's own WAV (`generated`), made to fit already. */
  readonly audio?: { readonly path: string; readonly generated: boolean };
}

/** x264 threads: fixed, so the bitstream does not depend on the machine's core count. */
const ENCODER_THREADS = '2';
const KEYFRAME_INTERVAL_SECONDS = 2;
const MAX_FADE_OUT_SECONDS = 1;
/** Integrated loudness the soundtrack is normalised to. */
export const LOUDNESS_LUFS = -16;
/** Frames node may queue ahead of ffmpeg before it waits: enough to overlap drawing with encoding. */
const QUEUED_FRAMES = 2;

function seconds(value: number): string {
  return String(Math.round(value * 1e6) / 1e6);
}

export function encoderArgs(options: FrameEncoderOptions): string[] {
  const { input, output, fps, frameCount, preset, audio } = options;
  const duration = frameCount / fps;
  const args = ['-hide_banner', '-loglevel', 'error', '-nostats', '-y'];
  args.push(
    '-f',
    'rawvideo',
    '-pix_fmt',
    'rgba',
    '-s',
    `${input.width}x${input.height}`,
    '-framerate',
    String(fps),
  );
  args.push('-i', 'pipe:0');
  if (audio?.generated) args.push('-i', audio.path);
  else if (audio) args.push('-stream_loop', '-1', '-t', seconds(duration), '-i', audio.path);
  const resize =
    input.width === output.width && input.height === output.height
      ? ''
      : `w=${output.width}:h=${output.height}:flags=bilinear:`;
  args.push('-map', '0:v:0');
  args.push(
    '-vf',
    `scale=${resize}out_color_matrix=bt709:out_range=tv,format=yuv420p`,
    '-c:v',
    'libx264',
    '-preset',
    preset,
    '-crf',
    preset === 'ultrafast' ? '23' : '20',
    '-g',
    String(fps * KEYFRAME_INTERVAL_SECONDS),
    '-threads',
    ENCODER_THREADS,
    // x264's lookahead thread, left to sync with the encoder threads on its own, makes frame-type decisions
    // depend on timing: the same frames then encode to different bytes from run to run.
    '-x264-params',
    'sync-lookahead=0',
    '-pix_fmt',
    'yuv420p',
    '-colorspace',
    'bt709',
    '-color_primaries',
    'bt709',
    '-color_trc',
    'bt709',
    '-color_range',
    'tv',
    // x264 writes its version and options into an SEI message; dropping SEI keeps the file build-independent.
    '-bsf:v',
    'filter_units=remove_types=6',
  );
  // No -frames:v: the video ends when stdin does, and a frame limit would also cut the audio short at
  // whatever point it had reached (timing-dependent, so not even deterministic).
  if (audio?.generated) {
    args.push('-map', '1:a:0', '-af', 'aformat=sample_fmts=fltp', '-c:a', 'aac', '-b:a', '128k');
  } else if (audio) {
    const fade = Math.min(MAX_FADE_OUT_SECONDS, duration / 4);
    args.push(
      '-map',
      '1:a:0',
      '-af',
      [
        'aformat=sample_fmts=fltp:channel_layouts=stereo',
        // apad then atrim: a soundtrack that could not be looped still ends exactly with the video.
        'apad',
        `atrim=0:${seconds(duration)}`,
        // EBU R128 to -16 LUFS, the usual target for online video; loudnorm works at 192 kHz, hence aresample.
        `loudnorm=I=${LOUDNESS_LUFS}:TP=-1.5:LRA=11`,
        'aresample=48000',
        `afade=t=out:st=${seconds(duration - fade)}:d=${seconds(fade)}`,
        'aformat=sample_fmts=fltp:sample_rates=48000:channel_layouts=stereo',
      ].join(','),
      '-c:a',
      'aac',
      '-b:a',
      '128k',
    );
  }
  args.push(
    '-map_metadata',
    '-1',
    '-map_chapters',
    '-1',
    '-fflags',
    '+bitexact',
    '-flags:v',
    '+bitexact',
    '-flags:a',
    '+bitexact',
    '-movflags',
    '+faststart',
    '-f',
    'mp4',
    options.outputPath,
  );
  return args;
}

export class FrameEncoder {
  readonly #process: FfmpegProcess;
  readonly #frameBytes: number;
  #stdinBroken = false;

  constructor(options: FrameEncoderOptions) {
    this.#frameBytes = options.input.width * options.input.height * 4;
    this.#process = new FfmpegProcess(options.ffmpegPath, encoderArgs(options), {
      stdin: true,
      stdout: false,
    });
    // ffmpeg exiting early makes writes fail with EPIPE; the exit status says why, so that is what we report.
    this.#stdin().on('error', () => {
      this.#stdinBroken = true;
    });
  }

  #stdin(): Writable {
    const stdin = this.#process.child.stdin;
    if (!stdin) throw new Error('ffmpeg has no stdin pipe');
    return stdin;
  }

  /** Queues one frame, waiting while ffmpeg is more than a couple of frames behind. */
  async write(frame: Buffer): Promise<void> {
    if (frame.length !== this.#frameBytes) {
      throw new Error(`frame has ${frame.length} bytes, expected ${this.#frameBytes}`);
    }
    const stdin = this.#stdin();
    if (this.#stdinBroken || stdin.destroyed || !this.#process.running) throw await this.#failure();
    stdin.write(frame);
    if (stdin.writableLength < QUEUED_FRAMES * this.#frameBytes) return;
    await new Promise<void>((resolve) => {
      const done = (): void => {
        stdin.off('drain', done);
        stdin.off('close', done);
        stdin.off('error', done);
        resolve();
      };
      stdin.on('drain', done);
      stdin.on('close', done);
      stdin.on('error', done);
    });
    if (this.#stdinBroken || stdin.destroyed) throw await this.#failure();
  }

  /** Ends the input and waits for ffmpeg to write the file. */
  async finish(): Promise<void> {
    this.#stdin().end();
    const exit = await this.#process.exited;
    if (exit.code !== 0) throw new TaskFailure('generation_failed', this.#process.describeExit(exit));
  }

  kill(): void {
    this.#process.kill();
  }

  get exited(): Promise<unknown> {
    return this.#process.exited;
  }

  async #failure(): Promise<TaskFailure> {
    const exit = await this.#process.exited;
    return new TaskFailure('generation_failed', this.#process.describeExit(exit));
  }
}
