/**
 * The URL a relayed request gives for one reference asset. An http(s) URL or an `asset://` id is passed on as
 * the client gave it (the other server fetches it itself, or hands the id to its provider); anything else (a `storage:` reference only this service can read,
 * or an inline `data:` URL) is sent as a base64 `data:` URL of the file this service already downloaded.
 * Downloaded assets carry no extension, so the media type is read from the file's first bytes.
 */
import { readFile } from 'node:fs/promises';
import { isAssetIdUrl } from '../../domain/generation-request.js';
import { mediaType } from '../../media/media-type.js';
import type { LocalAsset } from '../../ports/engine.js';

function isHttpUrl(url: string): boolean {
  return /^https?:\/\//i.test(url);
}

/** What to send for `asset`, whose URL in the task is `url`. */
export async function relayAssetUrl(url: string, asset: LocalAsset | undefined): Promise<string> {
  if (isHttpUrl(url) || isAssetIdUrl(url)) return url;
  if (!asset) throw new Error(`${url.slice(0, 16)}… has no downloaded file to send`);
  const bytes = await readFile(asset.path);
  return `data:${mediaType(bytes, asset.path, asset.field)};base64,${bytes.toString('base64')}`;
}
