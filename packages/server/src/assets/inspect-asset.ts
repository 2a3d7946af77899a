/**
 * Checks that a downloaded asset is what its field says (an image in `image_urls`, …) by probing its content,
 * never by trusting a file name or Content-Type, and reads the dimensions and length the engines need.
 * Every refusal is a `TaskFailure('invalid_asset')` whose message starts with the field and index.
 */

import { TaskFailure } from '../domain/errors.js';
import type { AssetField } from '../domain/models.js';
import { type ProbedStream, type ProbeResult, probe } from '../media/probe.js';

/** Larger images and video frames are refused: decoding them could exhaust memory (decompression bombs). */
export const MAX_IMAGE_PIXELS = 40_000_000;

export interface AssetFacts {
  readonly width?: number;
  readonly height?: number;
  /** Seconds, for videos and audio. */
  readonly duration?: number;
}

/** ffprobe format names of still images (content-detected, since asset files have no extension). */
const IMAGE_FORMATS = new Set(['png_pipe', 'jpeg_pipe', 'webp_pipe', 'gif', 'bmp_pipe', 'image2']);
/** Decoders of the accepted image formats (the ones the engines can decode), as ffprobe names them. */
const IMAGE_CODECS = new Map([
  ['png', 'png'],
  ['mjpeg', 'jpeg'],
  ['webp', 'webp'],
  ['gif', 'gif'],
  ['bmp', 'bmp'],
]);

/** The accepted still image's stream, if the file is one. */
function stillImage(result: ProbeResult): ProbedStream | undefined {
  if (!IMAGE_FORMATS.has(result.format)) return undefined;
  const stream = result.streams.find((s) => s.type === 'video');
  return stream && IMAGE_CODECS.has(stream.codec) ? stream : undefined;
}

/** A moving-picture stream: not cover art embedded in audio (an image codec without a frame rate). */
function isMotionVideo(stream: ProbedStream): boolean {
  return stream.type === 'video' && !(IMAGE_CODECS.has(stream.codec) && !stream.frameRate);
}

/** What the file is, for messages: `image/png`, `video/h264`, `audio/aac`. */
function describe(result: ProbeResult): string {
  const image = result.streams.find((s) => s.type === 'video');
  if (IMAGE_FORMATS.has(result.format) && image)
    return `image/${IMAGE_CODECS.get(image.codec) ?? image.codec}`;
  const video = result.streams.find(isMotionVideo);
  if (video) return `video/${video.codec || 'unknown'}`;
  const audio = result.streams.find((s) => s.type === 'audio');
  if (audio) return `audio/${audio.codec || 'unknown'}`;
  return `${result.format || 'unknown'} data`;
}

function checkPixels(label: string, width: number, height: number): void {
  if (width * height > MAX_IMAGE_PIXELS) {
    throw new TaskFailure(
      'invalid_asset',
      `${label}: ${width}x${height} is over the ${MAX_IMAGE_PIXELS / 1_000_000} megapixel limit`,
    );
  }
}

/** Probes the file at `path` and checks it fits `field`; `label` (`image_urls[1]`) starts every message. */
export async function inspectAsset(
  path: string,
  field: AssetField,
  label: string,
  signal?: AbortSignal,
): Promise<AssetFacts> {
  let result: ProbeResult;
  try {
    result = await probe(path, signal);
  } catch (error) {
    if (signal?.aborted) throw signal.reason;
    throw new TaskFailure('invalid_asset', `${label}: not a readable image, video or audio file`, {
      cause: error,
    });
  }
  const mismatch = (wanted: string) =>
    new TaskFailure('invalid_asset', `${label}: not ${wanted} (found ${describe(result)})`);

  switch (field) {
    case 'image_urls': {
      const image = stillImage(result);
      if (!image?.width || !image.height) throw mismatch('an image');
      checkPixels(label, image.width, image.height);
      return { width: image.width, height: image.height };
    }
    case 'video_urls': {
      const video = result.streams.find(isMotionVideo);
      if (!video?.width || !video.height || IMAGE_FORMATS.has(result.format) || !(result.duration > 0)) {
        throw mismatch('a video');
      }
      checkPixels(label, video.width, video.height);
      return { width: video.width, height: video.height, duration: result.duration };
    }
    case 'audio_urls': {
      if (!result.streams.some((s) => s.type === 'audio') || !(result.duration > 0)) {
        throw mismatch('an audio file');
      }
      return { duration: result.duration };
    }
  }
}
