/**
 * An image as Ark takes it, inline (`data:image/<format>;base64,…`): formats JPEG, PNG, WebP, BMP, TIFF, GIF;
 * width and height 300–6000 px; width/height 0.4–2.5; under 30 MB (the create page, "image_url"). An image
 * outside those limits is fitted into them rather than refused by Ark: cropped about its centre to the nearest
 * allowed shape (Ark itself centre-crops a first frame to the video's shape), scaled into the size limits,
 * and sent as JPEG.
 */
import { readFile } from 'node:fs/promises';
import { TaskFailure } from '../../domain/errors.js';
import { isAssetIdUrl } from '../../domain/generation-request.js';
import { mediaType } from '../../media/media-type.js';
import type { LocalAsset } from '../../ports/engine.js';

const MIN_SIDE = 300;
const MAX_SIDE = 6000;
const MIN_SHAPE = 0.4;
const MAX_SHAPE = 2.5;
const MAX_BYTES = 30 * 1024 * 1024;
const SENT_AS_IS = new Set(['image/jpeg', 'image/png', 'image/webp', 'image/bmp', 'image/gif']);
const JPEG_QUALITY = 92;

export function withinArkImageLimits(width: number, height: number): boolean {
  const shape = width / height;
  return (
    Math.min(width, height) >= MIN_SIDE &&
    Math.max(width, height) <= MAX_SIDE &&
    shape >= MIN_SHAPE &&
    shape <= MAX_SHAPE
  );
}

/** The centred crop of width×height to the allowed shapes, then the scale that brings it into the size limits. */
function fittedGeometry(width: number, height: number) {
  const shape = Math.min(MAX_SHAPE, Math.max(MIN_SHAPE, width / height));
  const cropWidth = Math.min(width, Math.round(height * shape));
  const cropHeight = Math.min(height, Math.round(width / shape));
  const short = Math.min(cropWidth, cropHeight);
  const long = Math.max(cropWidth, cropHeight);
  const scale = short < MIN_SIDE ? MIN_SIDE / short : long > MAX_SIDE ? MAX_SIDE / long : 1;
  return {
    crop: {
      x: Math.floor((width - cropWidth) / 2),
      y: Math.floor((height - cropHeight) / 2),
      width: cropWidth,
      height: cropHeight,
    },
    width: Math.min(MAX_SIDE, Math.max(MIN_SIDE, Math.round(cropWidth * scale))),
    height: Math.min(MAX_SIDE, Math.max(MIN_SIDE, Math.round(cropHeight * scale))),
  };
}

/**
 * The `url` of an `image_url` content item for `asset`; `label` names the engine in messages. An `asset://` id
 * of Ark's asset library goes as it is.
 */
export async function arkImageUrl(asset: LocalAsset, label: string): Promise<string> {
  if (isAssetIdUrl(asset.url)) return asset.url;
  // Loaded with the first image: @napi-rs/canvas is about 20 MB of memory a process without images never needs.
  const { createCanvas, loadImage } = await import('@napi-rs/canvas');
  const bytes = await readFile(asset.path);
  const type = mediaType(bytes, asset.path, asset.field);
  try {
    const image = await loadImage(bytes);
    if (SENT_AS_IS.has(type) && bytes.length < MAX_BYTES && withinArkImageLimits(image.width, image.height)) {
      return `data:${type};base64,${bytes.toString('base64')}`;
    }
    const { crop, width, height } = fittedGeometry(image.width, image.height);
    const canvas = createCanvas(width, height);
    const context = canvas.getContext('2d');
    context.imageSmoothingQuality = 'high';
    context.drawImage(image, crop.x, crop.y, crop.width, crop.height, 0, 0, width, height);
    const jpeg = await canvas.encode('jpeg', JPEG_QUALITY);
    return `data:image/jpeg;base64,${jpeg.toString('base64')}`;
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    throw new TaskFailure(
      'invalid_asset',
      `${asset.field}[${asset.index}]: ${label} cannot send this image (${reason}).`,
      { cause: error },
    );
  }
}
