/**
 * Random bytes drawn from the system a few kilobytes at a time: `randomBytes` per call (a request id, a task
 * id) cost a system call each, a few percent of a request. Node pools `randomUUID` the same way.
 */
import { randomBytes } from 'node:crypto';

const POOL_BYTES = 6144;
let pool = Buffer.alloc(0);
let offset = 0;

/** `length` (at most 6144) random bytes, a view valid until the next call: read them at once. */
export function pooledRandomBytes(length: number): Buffer {
  if (length > POOL_BYTES) throw new RangeError(`at most ${POOL_BYTES} pooled random bytes at a time`);
  if (offset + length > pool.length) {
    pool = randomBytes(POOL_BYTES);
    offset = 0;
  }
  offset += length;
  return pool.subarray(offset - length, offset);
}
