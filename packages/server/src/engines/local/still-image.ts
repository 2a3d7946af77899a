/**
 * A reference image prepared for drawing into frames (decoded, pre-scaled, with its blurred fill), and the
 * slow pan/zoom ("Ken Burns") that keeps a still picture moving while staying recognisable.
 */
import { readFile } from 'node:fs/promises';
import { type Canvas, createCanvas, type Image, loadImage, type SKRSContext2D } from '@napi-rs/canvas';
import { TaskFailure } from '../../domain/errors.js';
import type { FrameSize } from '../../domain/frame-size.js';
import { chooseFit, fitRect, type Rect } from '../../media/fit.js';
import { blurredBackdrop } from '../../media/fitted-image.js';
import type { LocalAsset } from '../../ports/engine.js';
import type { SeededRandom } from './seeded-random.js';

/** The most a drift zooms in; pictures are pre-scaled for it so zooming never upsamples a small copy. */
export const MAX_ZOOM = 1.15;

export interface Still {
  /** Where the picture sits at zoom 1. */
  readonly rect: Rect;
  readonly picture: Canvas;
  /** Frame-sized blurred fill behind a contained picture; null when the picture covers the frame. */
  readonly backdrop: Canvas | null;
}

/** What a frame shows of a still: zoomed by `zoom` about a point given as fractions of the frame. */
export interface StillView {
  readonly zoom: number;
  readonly focusX: number;
  readonly focusY: number;
}

export interface Drift {
  readonly from: StillView;
  readonly to: StillView;
}

export function assetLabel(asset: LocalAsset): string {
  return `${asset.field}[${asset.index}]`;
}

async function decode(asset: LocalAsset): Promise<Image> {
  let image: Image;
  try {
    image = await loadImage(await readFile(asset.path));
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    throw new TaskFailure(
      'invalid_asset',
      `${assetLabel(asset)}: the image could not be decoded (${reason}); use a PNG, JPEG or WebP image.`,
      { cause: error },
    );
  }
  if (!(image.width > 0 && image.height > 0)) {
    throw new TaskFailure('invalid_asset', `${assetLabel(asset)}: the image has no pixels.`);
  }
  return image;
}

/** Decodes an image asset; an undecodable one is `invalid_asset` naming its field and index. */
export async function loadStill(asset: LocalAsset, frame: FrameSize): Promise<Still> {
  const image = await decode(asset);
  const mode = chooseFit(image.width, image.height, frame.width, frame.height);
  const rect = fitRect(image.width, image.height, frame.width, frame.height, mode);
  // Scaling a large photo down once, not every frame, keeps per-frame drawing cheap.
  const scale = Math.min(1, (rect.width * MAX_ZOOM) / image.width);
  const picture = createCanvas(
    Math.max(1, Math.round(image.width * scale)),
    Math.max(1, Math.round(image.height * scale)),
  );
  const pictureCtx = picture.getContext('2d');
  pictureCtx.imageSmoothingQuality = 'high';
  pictureCtx.drawImage(image, 0, 0, picture.width, picture.height);
  return { rect, picture, backdrop: mode === 'contain' ? blurredBackdrop(image, frame) : null };
}

/**
 * Draws `still` as `view` shows it, bilinearly ('low'): a large picture was pre-scaled to within MAX_ZOOM of its
 * drawn size (loadStill), and for a canvas source 'high' rebuilds the mipmaps on every draw (docs/engines/local.md).
 */
export function drawStill(ctx: SKRSContext2D, still: Still, view: StillView, frame: FrameSize): void {
  if (still.backdrop) {
    ctx.drawImage(still.backdrop, 0, 0);
  } else {
    ctx.fillStyle = '#000';
    ctx.fillRect(0, 0, frame.width, frame.height);
  }
  const fx = view.focusX * frame.width;
  const fy = view.focusY * frame.height;
  ctx.save();
  ctx.imageSmoothingQuality = 'low';
  ctx.translate(fx, fy);
  ctx.scale(view.zoom, view.zoom);
  ctx.translate(-fx, -fy);
  const { rect } = still;
  ctx.drawImage(still.picture, rect.x, rect.y, rect.width, rect.height);
  ctx.restore();
}

/** Smoothstep: starts and ends at rest. */
export function ease(t: number): number {
  const x = Math.min(1, Math.max(0, t));
  return x * x * (3 - 2 * x);
}

export function viewAt(drift: Drift, t: number): StillView {
  const k = ease(t);
  return {
    zoom: drift.from.zoom + (drift.to.zoom - drift.from.zoom) * k,
    focusX: drift.from.focusX + (drift.to.focusX - drift.from.focusX) * k,
    focusY: drift.from.focusY + (drift.to.focusY - drift.from.focusY) * k,
  };
}

/** A push-in from the untouched picture (zoom 1) towards a seed-chosen point; `strength` scales the zoom. */
export function randomPushIn(random: SeededRandom, strength: number): Drift {
  const zoom = 1 + Math.min(MAX_ZOOM - 1, strength * random.range(0.6, 1));
  const focusX = random.range(0.3, 0.7);
  const focusY = random.range(0.3, 0.7);
  return {
    from: { zoom: 1, focusX, focusY },
    to: { zoom, focusX: focusX + random.range(-0.08, 0.08), focusY: focusY + random.range(-0.08, 0.08) },
  };
}

/** The same motion played backwards: it settles on the untouched picture. */
export function reversed(drift: Drift): Drift {
  return { from: drift.to, to: drift.from };
}
