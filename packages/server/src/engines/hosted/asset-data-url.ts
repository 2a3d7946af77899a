/**
 * A downloaded asset as a `data:` URL, for providers that take inputs by URL: the client's own URL may be a
 * file uploaded here (which a provider cannot fetch) or a `data:` URL already stored away, so every asset is
 * sent inline from the copy the worker downloaded, its type read from its bytes.
 */
import { readFile } from 'node:fs/promises';
import { mediaType } from '../../media/media-type.js';
import type { LocalAsset } from '../../ports/engine.js';

export interface InlineAsset {
  readonly contentType: string;
  readonly base64: string;
  /** `data:<type>;base64,<bytes>`. */
  readonly dataUrl: string;
}

export async function inlineAsset(asset: LocalAsset): Promise<InlineAsset> {
  const bytes = await readFile(asset.path);
  const contentType = mediaType(bytes, asset.path, asset.field);
  const base64 = bytes.toString('base64');
  return { contentType, base64, dataUrl: `data:${contentType};base64,${base64}` };
}
