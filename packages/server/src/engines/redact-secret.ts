/**
 * Keeps an engine's API key out of what it throws. Upstream error messages quote the server's answer, and
 * a server may echo the `Authorization` header back (a proxy's 401 page, a debugging endpoint).
 */
import { TaskFailure } from '../domain/errors.js';

const REDACTED = '[redacted]';
/** An excerpt cut off inside the key still shows its start; a shorter match is likely chance. */
const MIN_CUT_PREFIX = 4;

/**
 * `text` with every occurrence of `secret` replaced, and also a start of it where a quoted excerpt was cut
 * off (before a `…`, or at the end of the text).
 */
export function redactSecret(text: string, secret: string | undefined): string {
  if (!secret) return text;
  let redacted = text.split(secret).join(REDACTED);
  redacted = redacted.replace(/(\S+?)(…|$)/g, (match: string, word: string, end: string) => {
    for (let length = Math.min(word.length, secret.length - 1); length >= MIN_CUT_PREFIX; length--) {
      if (word.endsWith(secret.slice(0, length))) return `${word.slice(0, -length)}${REDACTED}${end}`;
    }
    return match;
  });
  return redacted;
}

/**
 * `error` with `secret` taken out of its message. A changed error loses its cause, which may quote the
 * secret too; an abort reason or an error without the secret is returned as it is.
 */
export function withoutSecret(error: unknown, secret: string | undefined): unknown {
  if (!secret || !(error instanceof Error)) return error;
  const message = redactSecret(error.message, secret);
  if (message === error.message) return error;
  return error instanceof TaskFailure ? new TaskFailure(error.code, message) : new Error(message);
}
