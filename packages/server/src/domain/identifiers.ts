/** Unguessable identifiers: task IDs and API keys. */
import { hash, randomBytes } from 'node:crypto';
import { pooledRandomBytes } from './random-pool.js';
import type { Environment } from './task.js';

const CROCKFORD = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';
const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

export const TASK_ID_PREFIX = 'task-unified-';

/** `task-unified-` and 26 Crockford base32 characters: 130 random bits. */
export function newTaskId(): string {
  const bytes = pooledRandomBytes(17);
  let suffix = '';
  // Five bits at a time from the low end of the bytes read as one big-endian number (without BigInt, which cost
  // a few percent of a creation).
  for (let i = 0; i < 26; i++) {
    const bit = i * 5;
    const last = 16 - (bit >> 3);
    const window = (bytes[last] ?? 0) | ((bytes[last - 1] ?? 0) << 8);
    suffix += CROCKFORD[(window >> (bit & 7)) & 31];
  }
  return TASK_ID_PREFIX + suffix;
}

export function isTaskId(value: string): boolean {
  return /^task-unified-[0-9A-HJKMNP-TV-Z]{26}$/.test(value);
}

/** Uniform base62 by rejection sampling (248 = 4 x 62, so bytes >= 248 are dropped). */
function randomBase62(length: number): string {
  let out = '';
  while (out.length < length) {
    for (const byte of randomBytes(length * 2)) {
      if (byte < 248 && out.length < length) out += BASE62[byte % 62];
    }
  }
  return out;
}

export const API_KEY_PREFIXES: Record<Environment, string> = {
  development: 'vg_dev_',
  production: 'vg_prod_',
};

/** `vg_dev_`/`vg_prod_` and 40 base62 characters (about 238 bits). */
export function newApiKey(environment: Environment): string {
  return API_KEY_PREFIXES[environment] + randomBase62(40);
}

export function looksLikeApiKey(value: string): boolean {
  return /^vg_(dev|prod)_[0-9A-Za-z]{32,}$/.test(value);
}

/** Keys carry enough entropy that a plain SHA-256 is a safe, fast lookup hash. */
export function hashApiKey(key: string): string {
  // One-shot: about half the cost of createHash().update().digest(), paid by every authenticated request.
  return hash('sha256', key, 'hex');
}

/** What lists show of a key: its environment prefix and first characters. */
export function apiKeyDisplayPrefix(key: string): string {
  const env = key.startsWith('vg_prod_') ? 'vg_prod_' : 'vg_dev_';
  return key.slice(0, env.length + 6);
}

export function newId(prefix: string): string {
  return `${prefix}_${randomBase62(24)}`;
}

/** A Standard Webhooks signing secret: `whsec_` and 32 random bytes in base64. */
export function newWebhookSecret(): string {
  return `whsec_${randomBytes(32).toString('base64')}`;
}
