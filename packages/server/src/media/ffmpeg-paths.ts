/** Where ffmpeg and ffprobe are: the npm-shipped binaries unless VIDEOGEN_FFMPEG_PATH/VIDEOGEN_FFPROBE_PATH say otherwise. */
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);

let ffmpeg: string | undefined;
let ffprobe: string | undefined;

export function ffmpegPath(): string {
  ffmpeg ??=
    process.env.VIDEOGEN_FFMPEG_PATH || (require('@ffmpeg-installer/ffmpeg') as { path: string }).path;
  return ffmpeg;
}

export function ffprobePath(): string {
  ffprobe ??=
    process.env.VIDEOGEN_FFPROBE_PATH || (require('@ffprobe-installer/ffprobe') as { path: string }).path;
  return ffprobe;
}
