/**
 * The active API keys this process looked up in the last second, by hash. Every authenticated request looks its
 * key up, and a poll was two queries (the key, then the task); with this it is one, and the key's query runs
 * once a second per key instead.
 *
 * A revocation by another process (the CLI, another API process) is seen within `ACTIVE_KEY_TTL_MS` (1 s): an
 * entry's lifetime counts from before its query was sent, so it ends less than 1 s after any revocation the query
 * could have missed. Revocations through this store take effect at once (`clear`). A key's expiry (the end of a
 * rotation's grace period) is checked on every hit, against the record's own `expiresAt`.
 */
import type { ApiKeyRecord } from '../ports/store.js';

/** The longest a revoked key may keep working on a process that did not revoke it. */
export const ACTIVE_KEY_TTL_MS = 1000;

/** Entries kept at most; past this the oldest go first (a miss only costs the query). */
const MAX_ENTRIES = 10_000;

interface Entry {
  readonly lookedUpAt: number;
  readonly key: Promise<ApiKeyRecord | undefined>;
}

export class ActiveKeyCache {
  readonly #entries = new Map<string, Entry>();
  readonly #now: () => number;

  constructor(now: () => number) {
    this.#now = now;
  }

  /** The active key with this hash, from `lookUp` or from a lookup less than the lifetime old. */
  find(hash: string, lookUp: () => Promise<ApiKeyRecord | undefined>): Promise<ApiKeyRecord | undefined> {
    const now = this.#now();
    const cached = this.#entries.get(hash);
    if (cached && now - cached.lookedUpAt < ACTIVE_KEY_TTL_MS)
      return cached.key.then((key) => live(key, now));
    if (cached) this.#entries.delete(hash);

    // Shared by the requests that miss together: one query per key per lifetime, however many polls.
    const key = lookUp();
    const entry = { lookedUpAt: now, key };
    if (this.#entries.size >= MAX_ENTRIES) this.#entries.delete(this.#entries.keys().next().value as string);
    this.#entries.set(hash, entry);
    key.then(
      (found) => {
        // Unknown keys are not kept: anyone can send any number of them.
        if (found === undefined && this.#entries.get(hash) === entry) this.#entries.delete(hash);
      },
      () => {
        if (this.#entries.get(hash) === entry) this.#entries.delete(hash);
      },
    );
    return key;
  }

  /** Forgets every key: one was revoked, rotated or changed through this process. */
  clear(): void {
    this.#entries.clear();
  }
}

function live(key: ApiKeyRecord | undefined, now: number): ApiKeyRecord | undefined {
  return key && (key.expiresAt === null || key.expiresAt > now) ? key : undefined;
}
