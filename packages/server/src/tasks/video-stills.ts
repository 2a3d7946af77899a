/**
 * Still images of a completed task's video, for the OpenAI Videos API's `GET /v1/videos/{id}/content?variant=`
 * (http/routes/openai-videos.ts): `thumbnail`, the first frame at the video's own size as WebP (the type
 * OpenAI's OpenAPI document gives that answer) or, for a client that asks for it, JPEG; and `spritesheet`, one frame a second at a quarter of the size,
 * tiled in rows of at most five, as JPEG. Made by ffmpeg from the stored MP4 when asked (a few hundred
 * milliseconds), never stored: nothing is left to delete with the task.
 */
import type { Readable } from 'node:stream';
import { ffmpegPath } from '../media/ffmpeg-paths.js';
import { FfmpegProcess } from '../media/ffmpeg-process.js';
import type { Storage } from '../ports/storage.js';

export type StillVariant = 'thumbnail' | 'spritesheet';

/** The thumbnail's encoding: OpenAI's WebP unless the client asks for JPEG. */
export type ThumbnailFormat = 'webp' | 'jpeg';

export interface Still {
  readonly bytes: Buffer;
  readonly contentType: 'image/webp' | 'image/jpeg';
}

/** Frames in a row of the sprite sheet at most. */
const SPRITE_COLUMNS = 5;

const JPEG_ARGS = ['-c:v', 'mjpeg', '-pix_fmt', 'yuvj420p', '-f', 'image2pipe'];

function stillArgs(
  variant: StillVariant,
  seconds: number,
  format: ThumbnailFormat,
): { args: string[]; contentType: Still['contentType'] } {
  if (variant === 'thumbnail') {
    return format === 'jpeg'
      ? { args: ['-frames:v', '1', ...JPEG_ARGS], contentType: 'image/jpeg' }
      : { args: ['-frames:v', '1', '-c:v', 'libwebp', '-f', 'webp'], contentType: 'image/webp' };
  }
  const frames = Math.max(1, Math.round(seconds));
  const columns = Math.min(SPRITE_COLUMNS, frames);
  const rows = Math.ceil(frames / columns);
  return {
    args: [
      '-vf',
      `fps=1,scale=trunc(iw/8)*2:trunc(ih/8)*2,tile=${columns}x${rows}`,
      '-frames:v',
      '1',
      ...JPEG_ARGS,
    ],
    contentType: 'image/jpeg',
  };
}

/**
 * The still of the video stored under `key` (an MP4 with its moov atom first, as every result is, so ffmpeg
 * reads it from a pipe); `seconds` is its duration. Throws when ffmpeg fails.
 */
export async function videoStill(
  storage: Pick<Storage, 'read'>,
  key: string,
  variant: StillVariant,
  seconds: number,
  format: ThumbnailFormat = 'webp',
): Promise<Still> {
  const { args, contentType } = stillArgs(variant, seconds, format);
  const source: Readable = await storage.read(key);
  const ffmpeg = new FfmpegProcess(
    ffmpegPath(),
    ['-hide_banner', '-loglevel', 'error', '-i', 'pipe:0', ...args, 'pipe:1'],
    { stdin: true, stdout: true },
  );
  const chunks: Buffer[] = [];
  ffmpeg.child.stdout?.on('data', (chunk: Buffer) => chunks.push(chunk));
  // ffmpeg stops reading once it has its frames: the rest of the video is not wanted, and the closed pipe is
  // no error.
  ffmpeg.child.stdin?.on('error', () => undefined);
  source.on('error', () => ffmpeg.kill());
  if (ffmpeg.child.stdin) source.pipe(ffmpeg.child.stdin);
  const exit = await ffmpeg.exited;
  source.unpipe();
  source.destroy();
  if (exit.code !== 0 || chunks.length === 0) {
    throw new Error(`making the ${variant} of ${key} failed: ${ffmpeg.describeExit(exit)}`);
  }
  return { bytes: Buffer.concat(chunks), contentType };
}
