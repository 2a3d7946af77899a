/**
 * Which active API key a secret is, for every authenticated request. The store answers from its cache of active
 * keys (a revocation elsewhere is seen within a second, store/active-key-cache.ts); recording the key's last use
 * is throttled here.
 */
import { hashApiKey } from '../domain/identifiers.js';
import type { ApiKeyRecord, ApiKeyStore } from '../ports/store.js';

/**
 * `last_used_at` is advisory; writing it at most once a minute per key (per process), without waiting for the
 * write, keeps polling off the write path.
 */
const TOUCH_INTERVAL_MS = 60_000;

export class ApiKeyAuthentication {
  readonly #store: Pick<ApiKeyStore, 'findActiveApiKey' | 'touchApiKey'>;
  readonly #now: () => number;
  readonly #lastTouched = new Map<string, number>();

  constructor(store: Pick<ApiKeyStore, 'findActiveApiKey' | 'touchApiKey'>, now: () => number = Date.now) {
    this.#store = store;
    this.#now = now;
  }

  /**
   * The active key this secret is, undefined when none is. Its last use is recorded in the background;
   * `onTouchFailed` hears when that write fails (the request never waits for it, nor fails with it).
   */
  async keyFor(
    secret: string,
    onTouchFailed: (error: unknown, keyId: string) => void,
  ): Promise<ApiKeyRecord | undefined> {
    const key = await this.#store.findActiveApiKey(hashApiKey(secret));
    if (!key) return undefined;
    const at = this.#now();
    if (at - (this.#lastTouched.get(key.id) ?? 0) >= TOUCH_INTERVAL_MS) {
      this.#lastTouched.set(key.id, at);
      this.#store.touchApiKey(key.id, at).catch((error: unknown) => onTouchFailed(error, key.id));
    }
    return key;
  }
}
