/**
 * Makes a video an engine got from elsewhere (a model's script or server) into what
 * docs/decisions.md#result-videos promises: H.264 yuv420p at 24 fps, the requested frame size and duration
 * (±1 frame), moov first, AAC 48 kHz stereo audio only when the request asked the model for sound or had an
 * audio reference (the model's own track kept, else the reference laid under), none otherwise. A file that
 * already is all that is only re-muxed (stream copy, moov moved first); anything else is re-encoded:
 * resampled to 24 fps, fitted to the frame by the local engine's rule (media/fit.ts, black bars when the
 * shapes differ a lot), cut or held on its last frame to the duration.
 */
import { rename } from 'node:fs/promises';
import { TaskFailure } from '../domain/errors.js';
import type { FrameSize } from '../domain/frame-size.js';
import { runAbortableFfmpeg } from './abortable-ffmpeg.js';
import { chooseFit, type FitMode, fitRect, type Rect } from './fit.js';
import { type ProbedStream, type ProbeResult, probe } from './probe.js';

export interface VideoTarget {
  readonly frame: FrameSize;
  readonly fps: number;
  /** Seconds. */
  readonly duration: number;
  /**
   * Whether the result keeps sound: the video's own track, else `soundtrack`. When false every audio track is
   * removed. A video without a track and no soundtrack stays silent: there is nothing to add.
   */
  readonly audio: boolean;
  /** Audio laid under a video that came without any when `audio` is wanted: the first audio reference. */
  readonly soundtrack?: string;
}

export interface ConformOptions {
  readonly signal: AbortSignal;
  /** Names the source in messages: `exec engine "wan"`. */
  readonly label: string;
  readonly ffmpegPath?: string;
}

/** What, if anything, keeps `probed` from meeting `target`; an empty list means it only needs re-muxing. */
export function conformProblems(probed: ProbeResult, target: VideoTarget): string[] {
  const video = probed.streams.find((s) => s.type === 'video');
  const audio = probed.streams.find((s) => s.type === 'audio');
  if (!video) return ['no video stream'];
  const problems: string[] = [];
  if (video.codec !== 'h264') problems.push(`codec ${video.codec}`);
  if (video.pixelFormat !== 'yuv420p') problems.push(`pixel format ${video.pixelFormat}`);
  if (video.width !== target.frame.width || video.height !== target.frame.height) {
    problems.push(`size ${video.width}x${video.height}`);
  }
  if (video.sampleAspectRatio !== undefined && Math.abs(video.sampleAspectRatio - 1) > 1e-3) {
    problems.push(`sample aspect ratio ${video.sampleAspectRatio.toFixed(3)}`);
  }
  if (video.rotation && video.rotation % 360 !== 0) problems.push(`rotated ${video.rotation}°`);
  if (video.frameRate === undefined || Math.abs(video.frameRate - target.fps) > 0.01) {
    problems.push(`${video.frameRate?.toFixed(2)} fps`);
  }
  if (Math.abs(probed.duration - target.duration) > 1 / target.fps) {
    problems.push(`${probed.duration.toFixed(3)} s long`);
  }
  if (target.audio && audio && audio.codec !== 'aac') problems.push(`audio ${audio.codec}`);
  if (target.audio && !audio && target.soundtrack) problems.push('no audio');
  if (target.audio && audio && (audio.sampleRate !== 48_000 || audio.channels !== 2)) {
    problems.push(`audio ${audio.sampleRate} Hz, ${audio.channels} channels`);
  }
  if (!target.audio && audio) problems.push('an audio track');
  return problems;
}

function seconds(value: number): string {
  return String(Math.round(value * 1e6) / 1e6);
}

/** A video's picture as ffmpeg decodes it. */
export interface SourcePicture {
  readonly width: number;
  readonly height: number;
  /** Width of a pixel over its height; 1 when not given. */
  readonly sampleAspectRatio?: number;
}

/**
 * How a picture is fitted to the frame, as the sizes and offsets of ffmpeg's `scale`, `pad` and `crop`
 * filters. All are even: yuv420p has one chroma sample per 2x2 pixels, so `pad` and `crop` round odd sizes
 * and offsets down, and an odd scaled size no longer fits the padded one (832x480 covering 854x480 is
 * 854x493, which `pad` made 854x492 and then refused).
 */
export interface ConformGeometry {
  readonly fit: FitMode;
  /** The picture at its display shape (square pixels), scaled by the fit rule. */
  readonly scaled: FrameSize;
  /** The canvas the scaled picture is centred on, at least the frame's size; x, y: where the picture sits. */
  readonly pad: Rect;
  /** The frame cut from the centre of the canvas. */
  readonly crop: Rect;
}

const even = (n: number): number => Math.max(2, 2 * Math.round(n / 2));
/** Offset that centres `inner` in `outer`, kept even (to within a pixel of the centre). */
const centre = (outer: number, inner: number): number => 2 * Math.floor((outer - inner) / 4);

/** Fits `source` to `frame` (whose sides are even, as frame-size.ts makes them) by media/fit.ts's rule. */
export function conformGeometry(source: SourcePicture, frame: FrameSize): ConformGeometry {
  const displayWidth = source.width * (source.sampleAspectRatio ?? 1);
  const fit = chooseFit(displayWidth, source.height, frame.width, frame.height);
  const fitted = fitRect(displayWidth, source.height, frame.width, frame.height, fit);
  const scaled = { width: even(fitted.width), height: even(fitted.height) };
  const padWidth = Math.max(scaled.width, frame.width);
  const padHeight = Math.max(scaled.height, frame.height);
  return {
    fit,
    scaled,
    pad: {
      width: padWidth,
      height: padHeight,
      x: centre(padWidth, scaled.width),
      y: centre(padHeight, scaled.height),
    },
    crop: {
      width: frame.width,
      height: frame.height,
      x: centre(padWidth, frame.width),
      y: centre(padHeight, frame.height),
    },
  };
}

/** The probed stream's picture as ffmpeg decodes it: a quarter turn swaps its sides and its pixels' shape. */
function decodedPicture(video: ProbedStream): SourcePicture | undefined {
  if (!video.width || !video.height) return undefined;
  const sampleAspectRatio = video.sampleAspectRatio ?? 1;
  if (Math.abs((video.rotation ?? 0) % 180) === 90) {
    return { width: video.height, height: video.width, sampleAspectRatio: 1 / sampleAspectRatio };
  }
  return { width: video.width, height: video.height, sampleAspectRatio };
}

export function reencodeArgs(
  input: string,
  output: string,
  target: VideoTarget,
  geometry: ConformGeometry,
  hasAudio: boolean,
): string[] {
  const { scaled, pad, crop } = geometry;
  const video = [
    `fps=${target.fps}`,
    `scale=${scaled.width}:${scaled.height}`,
    `pad=${pad.width}:${pad.height}:${pad.x}:${pad.y}:black`,
    `crop=${crop.width}:${crop.height}:${crop.x}:${crop.y}`,
    'setsar=1',
    // A video shorter than asked for holds its last frame; -t then cuts it to the duration.
    `tpad=stop_mode=clone:stop_duration=${seconds(target.duration)}`,
    'format=yuv420p',
  ].join(',');
  const soundtrack = target.audio && !hasAudio ? target.soundtrack : undefined;
  const args = ['-hide_banner', '-loglevel', 'error', '-nostdin', '-y', '-i', input];
  if (soundtrack) args.push('-stream_loop', '-1', '-t', seconds(target.duration), '-i', soundtrack);
  args.push('-map', '0:v:0', '-vf', video, '-c:v', 'libx264', '-preset', 'veryfast', '-crf', '18');
  args.push('-pix_fmt', 'yuv420p', '-r', String(target.fps));
  if (target.audio && (hasAudio || soundtrack)) {
    args.push('-map', soundtrack ? '1:a:0' : '0:a:0', '-af', `apad,atrim=0:${seconds(target.duration)}`);
    args.push('-c:a', 'aac', '-b:a', '128k', '-ar', '48000', '-ac', '2');
  } else {
    args.push('-an');
  }
  args.push('-t', seconds(target.duration), '-sn', '-dn', '-map_metadata', '-1');
  args.push('-movflags', '+faststart', '-f', 'mp4', output);
  return args;
}

function remuxArgs(input: string, output: string): string[] {
  return [
    ...['-hide_banner', '-loglevel', 'error', '-nostdin', '-y', '-i', input],
    ...['-map', '0:v:0', '-map', '0:a:0?', '-c', 'copy', '-sn', '-dn', '-map_metadata', '-1'],
    ...['-movflags', '+faststart', '-f', 'mp4', output],
  ];
}

function runFfmpeg(args: string[], options: ConformOptions): Promise<void> {
  return runAbortableFfmpeg(
    args,
    options,
    () => new TaskFailure('upstream_error', `${options.label}: its video could not be converted`),
  );
}

/**
 * Writes `input` conformed to `target` at `output` (the two may not be the same path). Resolves with what was
 * wrong with the input (empty when it was only re-muxed). An input that is not a video is `upstream_error`.
 */
export async function conformVideo(
  input: string,
  output: string,
  target: VideoTarget,
  options: ConformOptions,
): Promise<string[]> {
  let probed: ProbeResult;
  try {
    probed = await probe(input, options.signal);
  } catch (error) {
    options.signal.throwIfAborted();
    throw new TaskFailure('upstream_error', `${options.label}: its output is not a readable video.`, {
      cause: error,
    });
  }
  const video = probed.streams.find((s) => s.type === 'video');
  if (!video) throw new TaskFailure('upstream_error', `${options.label}: its output has no video stream.`);
  const picture = decodedPicture(video);
  if (!picture) throw new TaskFailure('upstream_error', `${options.label}: its video has no frame size.`);
  const problems = conformProblems(probed, target);
  const hasAudio = probed.streams.some((s) => s.type === 'audio');
  const partial = `${output}.partial.mp4`;
  const geometry = conformGeometry(picture, target.frame);
  await runFfmpeg(
    problems.length === 0
      ? remuxArgs(input, partial)
      : reencodeArgs(input, partial, target, geometry, hasAudio),
    options,
  );
  await rename(partial, output);
  return problems;
}
