/** Reading a provider's callback delivery (ports/provider-callback.ts): one header, the body as JSON. */
import type { CallbackDelivery } from '../../ports/provider-callback.js';

/** The header `name` (lower case) when it came once; undefined when absent, empty or repeated. */
export function deliveryHeader(delivery: CallbackDelivery, name: string): string | undefined {
  const value = delivery.headers[name];
  return typeof value === 'string' && value !== '' ? value : undefined;
}

/** The body as a JSON object, or undefined when it is not one. */
export function deliveryObject(delivery: CallbackDelivery): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(delivery.body.toString('utf8'));
    return value !== null && typeof value === 'object' && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : undefined;
  } catch {
    return undefined;
  }
}

/** The longest upstream id a delivery may name: far past any provider's, short enough for a work signal's hint. */
const MAX_ID_LENGTH = 200;

/** `value` when it can be an upstream id: a string of printable ASCII without spaces, not too long. */
export function upstreamIdOf(value: unknown): string | undefined {
  return typeof value === 'string' && /^[\x21-\x7e]+$/.test(value) && value.length <= MAX_ID_LENGTH
    ? value
    : undefined;
}
