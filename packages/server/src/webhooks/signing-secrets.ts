/**
 * The signing secrets of the accounts this dispatcher sent for in the last second. Every attempt signs with its
 * account's secrets, and reading them was one of the three store round trips of a delivery; with this it is one
 * read per account per second.
 *
 * A rotation, through this process or another, is signed with within `SIGNING_SECRETS_TTL_MS` (1 s): an entry's
 * lifetime counts from before its query was sent, so it ends less than 1 s after any rotation the query could
 * have missed. Until then the retired secret still signs, which a rotation's overlap allows; a secret whose
 * overlap has ended is dropped on every hit, against its own `expiresAt`.
 */
import type { WebhookSecret } from '../ports/store.js';

/** The longest a rotation may go unseen by a dispatcher. */
export const SIGNING_SECRETS_TTL_MS = 1000;

/** Accounts kept at most; past this the oldest go first (a miss only costs the query). */
const MAX_ENTRIES = 10_000;

interface Entry {
  readonly lookedUpAt: number;
  readonly secrets: Promise<WebhookSecret[]>;
}

export class SigningSecrets {
  readonly #entries = new Map<string, Entry>();
  readonly #lookUp: (accountId: string) => Promise<WebhookSecret[]>;
  readonly #now: () => number;

  constructor(lookUp: (accountId: string) => Promise<WebhookSecret[]>, now: () => number) {
    this.#lookUp = lookUp;
    this.#now = now;
  }

  /** The account's secrets that sign now, the current one first. */
  async of(accountId: string): Promise<string[]> {
    const now = this.#now();
    let entry = this.#entries.get(accountId);
    if (!entry || now - entry.lookedUpAt >= SIGNING_SECRETS_TTL_MS) {
      if (entry) this.#entries.delete(accountId);
      // Shared by the attempts that miss together: one query per account per lifetime.
      const created: Entry = { lookedUpAt: now, secrets: this.#lookUp(accountId) };
      if (this.#entries.size >= MAX_ENTRIES) {
        this.#entries.delete(this.#entries.keys().next().value as string);
      }
      this.#entries.set(accountId, created);
      created.secrets.catch(() => {
        if (this.#entries.get(accountId) === created) this.#entries.delete(accountId);
      });
      entry = created;
    }
    const secrets = await entry.secrets;
    return secrets.filter((s) => s.expiresAt === null || s.expiresAt > now).map((s) => s.secret);
  }
}
