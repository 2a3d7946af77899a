/**
 * Checks that a downloaded asset is what its field says (an image in `image_urls`, …) by probing its content,
 * never by trusting a file name or Content-Type, and reads the dimensions and length the engines need.
 */
import type { AssetField } from '../domain/models.js';
import { TaskFailure } from '../errors.js';
import { type ProbedStream, type ProbeResult, probe } from '../media/probe.js';

/** Larger images are refused: decoding them could exhaust memory (decompression bombs). */
export const MAX_IMAGE_PIXELS = 40_000_000;

export interface AssetFacts {
  readonly width?: number;
  readonly height?: number;
  readonly duration?: number;
}

/** ffprobe format names of the still-image formats accepted (the ones the engines can decode). */
const IMAGE_FORMATS = new Set(['png_pipe', 'jpeg_pipe', 'webp_pipe', 'gif', 'bmp_pipe', 'image2']);
const IMAGE_CODECS = new Set(['mjpeg', 'png', 'bmp', 'gif', 'webp']);

function isStillImage(result: ProbeResult): boolean {
  return IMAGE_FORMATS.has(result.format);
}

/** A real moving-picture stream: not cover art embedded in audio (an image codec without a frame rate). */
function isMotionVideo(stream: ProbedStream): boolean {
  return stream.type === 'video' && !(IMAGE_CODECS.has(stream.codec) && !stream.frameRate);
}

function describe(result: ProbeResult): string {
  const video = result.streams.find(isMotionVideo);
  if (isStillImage(result))
    return `a ${result.streams.find((s) => s.type === 'video')?.codec || 'still'} image`;
  if (video) return `a ${video.codec} video`;
  if (result.streams.some((s) => s.type === 'audio')) return 'audio';
  return `a ${result.format || 'unknown'} file`;
}

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
  const video = result.streams.find((s) => s.type === 'video');
  const audio = result.streams.find((s) => s.type === 'audio');
  const mismatch = (wanted: string) =>
    new TaskFailure('invalid_asset', `${label}: not ${wanted} (found ${describe(result)})`);

  switch (field) {
    case 'image_urls': {
      if (!isStillImage(result) || !video?.width || !video.height) throw mismatch('an image');
      if (video.width * video.height > MAX_IMAGE_PIXELS) {
        throw new TaskFailure(
          'invalid_asset',
          `${label}: ${video.width}x${video.height} is over the ${MAX_IMAGE_PIXELS / 1_000_000} megapixel limit`,
        );
      }
      return { width: video.width, height: video.height };
    }
    case 'video_urls': {
      const motion = result.streams.find(isMotionVideo);
      if (!motion?.width || !motion.height || isStillImage(result) || !(result.duration > 0)) {
        throw mismatch('a video');
      }
      return { width: motion.width, height: motion.height, duration: result.duration };
    }
    case 'audio_urls': {
      if (!audio || !(result.duration > 0)) throw mismatch('an audio file');
      return { duration: result.duration };
    }
  }
}
