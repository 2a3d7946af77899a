/** API key management for the CLI and the dashboard: keys are shown once and stored as hashes. */
import { apiKeyDisplayPrefix, hashApiKey, newApiKey } from '../domain/identifiers.js';
import type { Environment } from '../domain/task.js';
import { unixSeconds } from '../domain/unix-seconds.js';
import type { UsageLimits } from '../domain/usage.js';
import type { ApiKeyRecord, Store } from '../ports/store.js';
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

/** The keys that work now (not revoked, not past a rotation's grace period), newest first. */
export async function activeApiKeys(
  store: Store,
  accountId: string,
  now = Date.now(),
): Promise<ApiKeyRecord[]> {
  const keys = await store.listApiKeys(accountId);
  return keys
    .filter((key) => key.revokedAt === null && (key.expiresAt === null || key.expiresAt > now))
    .reverse();
}

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
  options: { name: string; environment: Environment; accountId?: string; limits?: UsageLimits },
): Promise<CreatedKey> {
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
export async function createFirstKey(store: Store): Promise<CreatedKey | undefined> {
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
  store: Store,
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
