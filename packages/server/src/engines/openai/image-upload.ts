/**
 * The image a create request uploads as `input_reference`: its bytes, content type and a file name to match.
 * Downloaded assets carry no extension (their content decides what they are), so the type is read from the
 * file's first bytes, then from an extension, if any.
 */
import { readFile } from 'node:fs/promises';
import { IMAGE_EXTENSIONS, mediaType } from '../media-type.js';

export interface ImageUpload {
  readonly bytes: Buffer;
  readonly contentType: string;
  readonly fileName: string;
}

interface ImageType {
  readonly contentType: string;
  readonly extension: string;
}

/** The image type of `bytes` by their signature, else by `path`'s extension. */
export function imageType(bytes: Buffer, path: string): ImageType | undefined {
  const contentType = mediaType(bytes, path, 'image_urls');
  const extension = IMAGE_EXTENSIONS[contentType];
  return extension ? { contentType, extension } : undefined;
}

export async function readImageUpload(path: string): Promise<ImageUpload> {
  const bytes = await readFile(path);
  const type = imageType(bytes, path);
  return {
    bytes,
    contentType: type?.contentType ?? 'application/octet-stream',
    fileName: type ? `input_reference.${type.extension}` : 'input_reference',
  };
}
