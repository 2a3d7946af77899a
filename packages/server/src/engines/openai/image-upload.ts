/**
 * The image a create request uploads as `input_reference`: its bytes, content type and a file name to match,
 * fitted to the video's size. OpenAI refuses a reference that is not exactly the requested size, and vLLM-Omni
 * stretches one to it, so a picture of another size or shape is drawn into the size first by the rule of
 * media/fit.ts (undistorted, covered or contained over a blurred fill) and sent as PNG.
 * Downloaded assets carry no extension (their content decides what they are), so the type is read from the
 * file's first bytes, then from an extension, if any.
 */
import { readFile } from 'node:fs/promises';
import { TaskFailure } from '../../domain/errors.js';
import type { FrameSize } from '../../domain/frame-size.js';
import { IMAGE_EXTENSIONS, mediaType } from '../../media/media-type.js';

export interface ImageUpload {
  readonly bytes: Buffer;
  readonly contentType: string;
  readonly fileName: string;
}

interface ImageType {
  readonly contentType: string;
  readonly extension: string;
}

/** The types every server of OpenAI's Videos API takes as they are (OpenAI: JPEG, PNG and WebP only). */
const SENT_AS_IS = new Set(['image/png', 'image/jpeg', 'image/webp']);

/** The image type of `bytes` by their signature, else by `path`'s extension. */
export function imageType(bytes: Buffer, path: string): ImageType | undefined {
  const contentType = mediaType(bytes, path, 'image_urls');
  const extension = IMAGE_EXTENSIONS[contentType];
  return extension ? { contentType, extension } : undefined;
}

/** The image at `path` as an upload of exactly `size`: as it is when it already is, else fitted into it. */
export async function readImageUpload(path: string, size: FrameSize, label: string): Promise<ImageUpload> {
  // Loaded with the first image: @napi-rs/canvas is about 20 MB of memory a process without images never needs.
  const { fitImage, imageSize } = await import('../../media/fitted-image.js');
  const bytes = await readFile(path);
  const type = imageType(bytes, path);
  try {
    const actual = await imageSize(bytes);
    if (
      type &&
      SENT_AS_IS.has(type.contentType) &&
      actual.width === size.width &&
      actual.height === size.height
    ) {
      return { bytes, contentType: type.contentType, fileName: `input_reference.${type.extension}` };
    }
    const fitted = await fitImage(bytes, size);
    return { bytes: await fitted.encode('png'), contentType: 'image/png', fileName: 'input_reference.png' };
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    throw new TaskFailure('invalid_asset', `image_urls[0]: ${label} cannot send this image (${reason}).`, {
      cause: error,
    });
  }
}
