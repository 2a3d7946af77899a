/**
 * A result's last frame as a PNG of the video's frame size (`return_last_frame`, `results[1]`): taken from the
 * conformed MP4 by ffmpeg, or, when the engine's upstream made one itself (Ark's `last_frame_url`), that
 * picture brought to the frame the way conforming brought the video there (conform-video.ts's geometry), so
 * that it still is the video's last frame when conforming changed the video's size.
 */
import { copyFile } from 'node:fs/promises';
import { TaskFailure } from '../domain/errors.js';
import type { FrameSize } from '../domain/frame-size.js';
import { type AbortableFfmpegOptions, runAbortableFfmpeg } from './abortable-ffmpeg.js';
import { conformGeometry } from './conform-video.js';
import { probe } from './probe.js';

export type StillOptions = AbortableFfmpegOptions;

/**
 * Writes the last frame of `video` (a conformed result) to `output` as a PNG: ffmpeg decodes its last second
 * and keeps overwriting the one image, so the file ends as the last decoded frame.
 */
export async function extractLastFrame(video: string, output: string, options: StillOptions): Promise<void> {
  await runAbortableFfmpeg(
    [
      ...['-hide_banner', '-loglevel', 'error', '-nostdin', '-y', '-sseof', '-1', '-i', video],
      ...['-map', '0:v:0', '-update', '1', '-c:v', 'png', '-f', 'image2', output],
    ],
    options,
    () => new TaskFailure('generation_failed', "The video's last frame could not be taken"),
  );
}

/**
 * Writes `picture` (an image the upstream made of the video's last frame) to `output` as a PNG of `frame`'s
 * size: as it is when it has that size already, else scaled, padded and cropped as the video was. `label`
 * names the engine in messages.
 */
export async function fitLastFrame(
  picture: string,
  output: string,
  frame: FrameSize,
  label: string,
  options: StillOptions,
): Promise<void> {
  const notAnImage = () =>
    new TaskFailure('upstream_error', `${label}: its last frame is not a readable image`);
  const probed = await probe(picture, options.signal).catch((error: unknown) => {
    options.signal.throwIfAborted();
    throw new TaskFailure('upstream_error', `${notAnImage().message}.`, { cause: error });
  });
  const image = probed.streams.find((stream) => stream.type === 'video');
  if (!image?.width || !image.height) throw new TaskFailure('upstream_error', `${notAnImage().message}.`);
  if (image.codec === 'png' && image.width === frame.width && image.height === frame.height) {
    await copyFile(picture, output);
    return;
  }
  const { scaled, pad, crop } = conformGeometry(
    { width: image.width, height: image.height, sampleAspectRatio: image.sampleAspectRatio ?? 1 },
    frame,
  );
  const filter = [
    `scale=${scaled.width}:${scaled.height}`,
    `pad=${pad.width}:${pad.height}:${pad.x}:${pad.y}:black`,
    `crop=${crop.width}:${crop.height}:${crop.x}:${crop.y}`,
    'setsar=1',
  ].join(',');
  await runAbortableFfmpeg(
    [
      ...['-hide_banner', '-loglevel', 'error', '-nostdin', '-y', '-i', picture],
      ...['-vf', filter, '-frames:v', '1', '-c:v', 'png', '-f', 'image2', output],
    ],
    options,
    notAnImage,
  );
}
