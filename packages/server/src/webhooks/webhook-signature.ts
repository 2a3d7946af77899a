/**
 * Standard Webhooks signing: `v1,` and the base64 HMAC-SHA256 of `id.timestamp.body`, keyed by the bytes the
 * `whsec_` secret encodes. Several secrets (a rotation overlap) give several signatures, space-separated.
 */
import { createHmac } from 'node:crypto';

const SECRET_PREFIX = 'whsec_';

/** How long a rotated-out secret keeps signing beside the new one, so receivers can switch without a gap. */
export const WEBHOOK_SECRET_OVERLAP_MS = 24 * 60 * 60 * 1000;

function keyOf(secret: string): Buffer {
  return Buffer.from(
    secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret,
    'base64',
  );
}

export function signatureHeader(
  secrets: readonly string[],
  id: string,
  timestampSeconds: number,
  body: string,
): string {
  return secrets
    .map(
      (secret) =>
        `v1,${createHmac('sha256', keyOf(secret)).update(`${id}.${timestampSeconds}.${body}`).digest('base64')}`,
    )
    .join(' ');
}
