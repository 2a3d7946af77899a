/** API key management for the CLI (and later the dashboard): keys are shown once and stored as hashes. */
import { apiKeyDisplayPrefix, hashApiKey, newApiKey } from './domain/identifiers.js';
import type { Environment } from './domain/task.js';
import type { ApiKeyRecord, Store } from './ports/store.js';

export interface CreatedKey {
  /** The secret itself: shown once, never stored. */
  readonly key: string;
  readonly record: ApiKeyRecord;
}

/** The account keys are created for when none is named: the first one, created on an empty store. */
export async function defaultAccountId(store: Store): Promise<string> {
  const keys = await store.listApiKeys();
  const first = keys.at(0)?.accountId;
  if (first) return first;
  return (await store.createAccount()).id;
}

export async function createApiKey(
  store: Store,
  options: { name: string; environment: Environment; accountId?: string },
): Promise<CreatedKey> {
  const accountId = options.accountId ?? (await defaultAccountId(store));
  const key = newApiKey(options.environment);
  const record = await store.createApiKey({
    accountId,
    name: options.name,
    environment: options.environment,
    prefix: apiKeyDisplayPrefix(key),
    hash: hashApiKey(key),
  });
  return { key, record };
}

/** On a store with no account yet, creates one with a development key; otherwise nothing. */
export async function createFirstKey(store: Store): Promise<CreatedKey | undefined> {
  if ((await store.countAccounts()) > 0) return undefined;
  const account = await store.createAccount();
  return createApiKey(store, {
    name: 'first development key',
    environment: 'development',
    accountId: account.id,
  });
}
