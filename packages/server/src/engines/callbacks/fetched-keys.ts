/**
 * Keys a verifier fetches from its provider (Replicate's signing secret, fal's JWKS), kept for `maxAgeMs` and
 * fetched once for any number of deliveries waiting on them. A delivery that the kept keys do not verify may ask
 * for fresh ones (the provider rotated them), and a fetch that failed may be tried again, but neither more than
 * once per `retryAfterMs`: forged deliveries cannot make this process hammer the provider.
 */
export interface FetchedKeysOptions<T> {
  fetch(): Promise<T>;
  readonly maxAgeMs: number;
  readonly retryAfterMs: number;
  readonly now?: () => number;
}

export class FetchedKeys<T> {
  readonly #options: FetchedKeysOptions<T>;
  readonly #now: () => number;
  #kept: { readonly value: T; readonly at: number } | undefined;
  #failure: { readonly error: unknown; readonly at: number } | undefined;
  #fetching: Promise<T> | undefined;

  constructor(options: FetchedKeysOptions<T>) {
    this.#options = options;
    this.#now = options.now ?? Date.now;
  }

  /** The kept keys while they are young enough, else fresh ones; rejects when they cannot be had. */
  get(): Promise<T> {
    const kept = this.#kept;
    if (kept && this.#now() - kept.at < this.#options.maxAgeMs) return Promise.resolve(kept.value);
    return this.#fetch();
  }

  /** Fresh keys, unless the last fetch was less than `retryAfterMs` ago: then undefined (nothing new to try). */
  async refreshed(): Promise<T | undefined> {
    const last = Math.max(this.#kept?.at ?? -Infinity, this.#failure?.at ?? -Infinity);
    if (this.#now() - last < this.#options.retryAfterMs) return undefined;
    return this.#fetch();
  }

  #fetch(): Promise<T> {
    const failure = this.#failure;
    if (failure && this.#now() - failure.at < this.#options.retryAfterMs)
      return Promise.reject(failure.error);
    this.#fetching ??= this.#options
      .fetch()
      .then(
        (value) => {
          this.#kept = { value, at: this.#now() };
          this.#failure = undefined;
          return value;
        },
        (error: unknown) => {
          this.#failure = { error, at: this.#now() };
          throw error;
        },
      )
      .finally(() => {
        this.#fetching = undefined;
      });
    return this.#fetching;
  }
}
