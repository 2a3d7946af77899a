/** Base64 `data:` URLs, the inline form of a reference asset. */

import { megabytes } from './megabytes.js';

export class DataUrlProblem extends Error {}

/** The bytes and media type of a base64 `data:` URL of at most `maxBytes`; throws `DataUrlProblem`. */
export function decodeDataUrl(url: string, maxBytes: number): { bytes: Buffer; contentType: string } {
  const comma = url.indexOf(',');
  const header = comma < 0 ? '' : url.slice('data:'.length, comma);
  if (comma < 0 || !/;base64$/i.test(header)) throw new DataUrlProblem('only base64 data: URLs are accepted');
  const payload = url.slice(comma + 1);
  if (Math.floor((payload.length * 3) / 4) > maxBytes + 2) {
    throw new DataUrlProblem(`larger than ${megabytes(maxBytes)}`);
  }
  const bytes = Buffer.from(payload, 'base64');
  if (bytes.length === 0) throw new DataUrlProblem('the data: URL is empty');
  if (bytes.length > maxBytes) throw new DataUrlProblem(`larger than ${megabytes(maxBytes)}`);
  const contentType = header.split(';')[0] || 'application/octet-stream';
  return { bytes, contentType };
}
