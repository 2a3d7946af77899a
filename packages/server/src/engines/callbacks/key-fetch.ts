/** How a verifier fetches its provider's keys: briefly, since a delivery waits for them and wants an answer soon. */
import type { Dispatcher } from 'undici';
import { withoutSecret } from '../redact-secret.js';
import { type UpstreamCall, upstreamJson } from '../upstream-request.js';

/** Both Ark and Replicate resend a delivery not answered within a few seconds. */
const FETCH_TIMEOUT_MS = 4000;

/** The JSON answer to `call`, tried twice at most within 4 s; the key in `secret` is kept out of errors. */
export async function fetchKeysJson(
  call: UpstreamCall,
  options: { readonly label: string; readonly dispatcher?: Dispatcher; readonly secret?: string },
): Promise<unknown> {
  try {
    return await upstreamJson<unknown>(call, {
      label: options.label,
      signal: AbortSignal.timeout(FETCH_TIMEOUT_MS),
      deadline: Date.now() + FETCH_TIMEOUT_MS,
      attemptTimeoutMs: FETCH_TIMEOUT_MS / 2,
      maxAttempts: 2,
      ...(options.dispatcher && { dispatcher: options.dispatcher }),
    });
  } catch (error) {
    throw options.secret ? withoutSecret(error, options.secret) : error;
  }
}
