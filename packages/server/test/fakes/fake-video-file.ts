/**
 * A real MP4 (H.264, yuv420p, and an AAC tone when asked) of the shape a fake model server makes, encoded with
 * ffmpeg once per shape and kept in a cache folder (see cached-file.ts).
 */
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { ffmpegPath } from '../../src/media/ffmpeg-paths.js';
import { cachedFile } from './cached-file.js';

const run = promisify(execFile);

interface FakeVideoLook {
  readonly width: number;
  readonly height: number;
  /** Frames a second, whole or decimal (ffmpeg reads 23.976 as 2997/125). */
  readonly fps: number;
  /** ffmpeg's moving test pattern, or a flat colour (`0xRRGGBB`), which is cheaper to encode and to conform. */
  readonly picture: 'test-pattern' | { readonly colour: string };
  /** A sine tone as the soundtrack; none when left out. */
  readonly tone?: {
    readonly frequency: number;
    readonly sampleRate: number;
    readonly channels: 1 | 2;
  };
}

/** What a fake makes: how it looks and sounds, and either its exact frame count or its length in seconds. */
export type FakeVideo = FakeVideoLook & ({ readonly frames: number } | { readonly seconds: number });

/** The path, under `cacheDir`, of an MP4 of this shape. */
export function fakeVideoFile(cacheDir: string, video: FakeVideo): Promise<string> {
  const args = encoding(video);
  const name = `${createHash('sha1').update(args.join(' ')).digest('hex')}.mp4`;
  return cachedFile(join(cacheDir, name), (partial) => run(ffmpegPath(), [...args, partial]));
}

/** ffmpeg's arguments but the output path: they decide the file's content, so they name it too. */
function encoding(video: FakeVideo): string[] {
  const { width, height, fps, picture, tone } = video;
  const frame = `size=${width}x${height}:rate=${fps}`;
  const source = picture === 'test-pattern' ? `testsrc2=${frame}` : `color=c=${picture.colour}:${frame}`;
  const seconds = 'frames' in video ? video.frames / fps : video.seconds;
  return [
    ...['-v', 'error', '-nostdin', '-y'],
    ...['-f', 'lavfi', '-i', source],
    ...(tone
      ? [
          ...['-f', 'lavfi', '-i'],
          `sine=frequency=${tone.frequency}:sample_rate=${tone.sampleRate}:duration=${seconds}`,
        ]
      : []),
    ...('frames' in video ? ['-frames:v', String(video.frames)] : ['-t', String(video.seconds)]),
    ...['-c:v', 'libx264', '-preset', 'ultrafast', '-pix_fmt', 'yuv420p'],
    ...(tone ? ['-c:a', 'aac', '-ac', String(tone.channels)] : []),
  ];
}
