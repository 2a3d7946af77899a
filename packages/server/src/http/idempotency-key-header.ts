/** The `Idempotency-Key` header of a creation, as Node hands it over: absent, one value, or repeated. */
import { ApiError } from '../domain/errors.js';
import { IDEMPOTENCY_KEY_NAME, isIdempotencyKey } from '../domain/idempotency-key.js';

/** The header is named as errors name the key. */
export const IDEMPOTENCY_HEADER = IDEMPOTENCY_KEY_NAME;

export function parseIdempotencyKey(value: string | string[] | undefined): string | undefined {
  if (value === undefined) return undefined;
  if (Array.isArray(value) || !isIdempotencyKey(value)) {
    throw new ApiError(
      'invalid_parameter',
      `${IDEMPOTENCY_HEADER} must be one header of 1 to 255 visible ASCII characters.`,
      { param: IDEMPOTENCY_HEADER },
    );
  }
  return value;
}
