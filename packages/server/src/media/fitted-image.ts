/**
 * A picture fitted into a frame of another size by the rule of media/fit.ts: covered when cropping keeps
 * nearly all of it, otherwise contained over a blurred, enlarged copy of itself. The local engine draws its
 * stills this way, and engines whose servers want an image of exactly the video's size (OpenAI's
 * `input_reference`) send one made this way, so the first frame is the client's picture, undistorted.
 */
import { type Canvas, createCanvas, type Image, loadImage } from '@napi-rs/canvas';
import type { FrameSize } from '../domain/frame-size.js';
import { chooseFit, fitRect } from './fit.js';

/** A frame-sized blurred fill of `image`, for behind a contained picture. */
export function blurredBackdrop(image: Image | Canvas, frame: FrameSize): Canvas {
  const canvas = createCanvas(frame.width, frame.height);
  const ctx = canvas.getContext('2d');
  ctx.fillStyle = '#000';
  ctx.fillRect(0, 0, frame.width, frame.height);
  const radius = Math.max(frame.width, frame.height) / 40;
  // Enlarged past the frame so the blur's transparent fringe falls outside it.
  const cover = fitRect(
    image.width,
    image.height,
    frame.width + 6 * radius,
    frame.height + 6 * radius,
    'cover',
  );
  ctx.filter = `blur(${radius}px)`;
  ctx.drawImage(image, cover.x - 3 * radius, cover.y - 3 * radius, cover.width, cover.height);
  ctx.filter = 'none';
  ctx.fillStyle = 'rgba(0, 0, 0, 0.3)';
  ctx.fillRect(0, 0, frame.width, frame.height);
  return canvas;
}

/** The decoded `bytes` drawn into a `frame`-sized canvas. Rejects when the bytes are not an image. */
export async function fitImage(bytes: Buffer, frame: FrameSize): Promise<Canvas> {
  const image = await loadImage(bytes);
  const mode = chooseFit(image.width, image.height, frame.width, frame.height);
  const rect = fitRect(image.width, image.height, frame.width, frame.height, mode);
  const canvas = mode === 'contain' ? blurredBackdrop(image, frame) : createCanvas(frame.width, frame.height);
  const ctx = canvas.getContext('2d');
  ctx.imageSmoothingQuality = 'high';
  ctx.drawImage(image, rect.x, rect.y, rect.width, rect.height);
  return canvas;
}

/** The pixel size of an encoded image, decoded to learn it. */
export async function imageSize(bytes: Buffer): Promise<FrameSize> {
  const image = await loadImage(bytes);
  return { width: image.width, height: image.height };
}
