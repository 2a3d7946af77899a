/**
 * The arguments every `Storage` implementation accepts, checked the same way by each so that a key, a type
 * or a range valid on one backend is valid on all of them.
 */
import type { ByteRange } from '../ports/storage.js';

/**
 * Throws unless `key` is a relative path of plain segments: no `..`, `.`, empty or dot-led segment, no
 * leading slash, backslash or control character. What an object store would take as an opaque name must
 * not walk out of the root of a file store.
 */
export function assertStorageKey(key: string): void {
  const valid =
    key.length > 0 &&
    key.length <= 1024 &&
    !key.includes('\\') &&
    // biome-ignore lint/suspicious/noControlCharactersInRegex: rejecting them is the point
    !/[\u0000-\u001f\u007f]/.test(key) &&
    key.split('/').every((segment) => segment.length > 0 && !segment.startsWith('.'));
  if (!valid) throw new Error(`Invalid storage key ${JSON.stringify(key)}.`);
}

export function assertContentType(contentType: string): void {
  // Printable ASCII only: it is sent back as a header.
  if (!/^[\x21-\x7e][\x20-\x7e]{0,254}$/.test(contentType)) {
    throw new Error(`Invalid content type ${JSON.stringify(contentType)}.`);
  }
}

/** Throws a `RangeError` unless the range is whole, non-negative and not reversed. */
export function assertByteRange(range: ByteRange): void {
  if (!(Number.isSafeInteger(range.start) && Number.isSafeInteger(range.end))) {
    throw new RangeError('A byte range needs whole numbers.');
  }
  if (range.start < 0 || range.end < range.start) {
    throw new RangeError(`Invalid byte range ${range.start}-${range.end}.`);
  }
}
