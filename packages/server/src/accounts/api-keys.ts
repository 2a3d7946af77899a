/** API key management for the CLI and the dashboard: keys are shown once and stored as hashes. */
import { isActiveApiKey } from '../domain/api-key-state.js';
import { refuseControlCharacters } from '../domain/control-characters.js';
import { apiKeyDisplayPrefix, hashApiKey, newApiKey } from '../domain/identifiers.js';
import type { Environment } from '../domain/task.js';
import { unixSeconds } from '../domain/unix-seconds.js';
import type { UsageLimits } from '../domain/usage.js';
import type { AccountStore, ApiKeyRecord, ApiKeyStore } from '../ports/store.js';
import { toPublicLimits } from '../usage/usage-limits.js';

/** A key as the dashboard lists it: never the key itself, times in Unix seconds. */
export interface PublicApiKey {
  id: string;
  name: string;
  environment: Environment;
  prefix: string;
  created_at: number;
  last_used_at: number | null;
  expires_at: number | null;
  /** Null: no limit. */
  monthly_video_seconds: number | null;
  /** In the prices' currency; null: no limit. */
  monthly_budget: number | null;
}

const nullableSeconds = (ms: number | null): number | null => (ms === null ? null : unixSeconds(ms));

export function toPublicApiKey(record: ApiKeyRecord): PublicApiKey {
  return {
    id: record.id,
    name: record.name,
    environment: record.environment,
    prefix: record.prefix,
    created_at: unixSeconds(record.createdAt),
    last_used_at: nullableSeconds(record.lastUsedAt),
    expires_at: nullableSeconds(record.expiresAt),
    ...toPublicLimits(record.limits),
  };
}

/** The keys that work now, newest first. */
export async function activeApiKeys(
  store: Pick<ApiKeyStore, 'listApiKeys'>,
  accountId: string,
  now = Date.now(),
): Promise<ApiKeyRecord[]> {
  const keys = await store.listApiKeys(accountId);
  return keys.filter((key) => isActiveApiKey(key, now)).reverse();
}

/** Every account's keys, whatever their state, oldest first (`videogen keys list`). */
export function allApiKeys(store: Pick<ApiKeyStore, 'listApiKeys'>): Promise<ApiKeyRecord[]> {
  return store.listApiKeys();
}

/**
 * Revokes the one active key with this id or displayed prefix, of `accountId`'s keys when given; false unless
 * exactly one matched.
 */
export function revokeApiKey(
  store: Pick<ApiKeyStore, 'revokeApiKey'>,
  idOrPrefix: string,
  accountId?: string,
): Promise<boolean> {
  return store.revokeApiKey(idOrPrefix, accountId);
}

/** Revokes an active key of the account by id and returns it as it was; undefined when there is none. */
export async function revokeActiveApiKey(
  store: Pick<ApiKeyStore, 'listApiKeys' | 'revokeApiKey'>,
  accountId: string,
  keyId: string,
): Promise<ApiKeyRecord | undefined> {
  const key = (await activeApiKeys(store, accountId)).find((k) => k.id === keyId);
  if (!key || !(await store.revokeApiKey(keyId, accountId))) return undefined;
  return key;
}

export interface CreatedKey {
  /** The secret itself: shown once, never stored. */
  readonly key: string;
  readonly record: ApiKeyRecord;
}

/** The account keys are created for when none is named: the first one, created on an empty store. */
export async function defaultAccountId(
  store: Pick<ApiKeyStore, 'listApiKeys'> & Pick<AccountStore, 'createAccount'>,
): Promise<string> {
  const keys = await store.listApiKeys();
  const first = keys.at(0)?.accountId;
  if (first) return first;
  return (await store.createAccount()).id;
}

export async function createApiKey(
  store: Pick<ApiKeyStore, 'listApiKeys' | 'createApiKey'> & Pick<AccountStore, 'createAccount'>,
  options: { name: string; environment: Environment; accountId?: string; limits?: UsageLimits },
): Promise<CreatedKey> {
  refuseControlCharacters(options.name, 'name');
  const accountId = options.accountId ?? (await defaultAccountId(store));
  const key = newApiKey(options.environment);
  const record = await store.createApiKey({
    accountId,
    name: options.name,
    environment: options.environment,
    prefix: apiKeyDisplayPrefix(key),
    hash: hashApiKey(key),
    ...(options.limits ? { limits: options.limits } : {}),
  });
  return { key, record };
}

/** On a store with no account yet, creates one with a development key; otherwise nothing. */
export async function createFirstKey(
  store: Pick<ApiKeyStore, 'listApiKeys' | 'createApiKey'> &
    Pick<AccountStore, 'createAccount' | 'countAccounts'>,
): Promise<CreatedKey | undefined> {
  if ((await store.countAccounts()) > 0) return undefined;
  const account = await store.createAccount();
  return createApiKey(store, {
    name: 'first development key',
    environment: 'development',
    accountId: account.id,
  });
}

/**
 * Replaces a key of the account with a new one (same name and environment); the old one keeps working for
 * `graceMs` so that its clients can move over. Undefined when the account has no such active key.
 */
export async function rotateApiKey(
  store: Pick<ApiKeyStore, 'listApiKeys' | 'rotateApiKey'>,
  accountId: string,
  keyId: string,
  graceMs: number,
): Promise<{ key: string; record: ApiKeyRecord; previous: ApiKeyRecord } | undefined> {
  const existing = (await store.listApiKeys(accountId)).find((key) => key.id === keyId);
  if (!existing) return undefined;
  const key = newApiKey(existing.environment);
  const rotation = await store.rotateApiKey(
    keyId,
    accountId,
    { prefix: apiKeyDisplayPrefix(key), hash: hashApiKey(key) },
    graceMs,
  );
  return rotation && { key, record: rotation.created, previous: rotation.previous };
}
