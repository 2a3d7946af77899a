/**
 * Monthly limits of accounts and API keys, for the CLI and the dashboard: read and set in public units (video
 * seconds, and amounts of the prices' currency), kept in the store in micro-units.
 */
import { isActiveApiKey } from '../domain/api-key-state.js';
import { fromMicros, toMicros } from '../domain/prices.js';
import type { UsageLimits } from '../domain/usage.js';
import type { ApiKeyRecord, ApiKeyStore, UsageStore } from '../ports/store.js';

/** Limits as the dashboard and the CLI show and take them; null is no limit. */
export interface PublicLimits {
  monthly_video_seconds: number | null;
  /** In the prices' currency. */
  monthly_budget: number | null;
}

/** A limit given that cannot be one: said in the words of the flag or field that gave it. */
export class LimitError extends Error {
  readonly field: keyof PublicLimits;

  constructor(field: keyof PublicLimits, message: string) {
    super(message);
    this.name = 'LimitError';
    this.field = field;
  }
}

export function toPublicLimits(limits: UsageLimits): PublicLimits {
  return {
    monthly_video_seconds: limits.monthlyVideoSeconds,
    monthly_budget: limits.monthlyBudgetMicros === null ? null : fromMicros(limits.monthlyBudgetMicros),
  };
}

/** Checks limits given in public units: whole seconds, amounts of at most six decimals, none negative. */
export function fromPublicLimits(limits: PublicLimits): UsageLimits {
  const seconds = limits.monthly_video_seconds;
  if (seconds !== null && !(Number.isSafeInteger(seconds) && seconds >= 0)) {
    throw new LimitError(
      'monthly_video_seconds',
      'monthly_video_seconds must be a whole number of seconds, or none.',
    );
  }
  const budget = limits.monthly_budget;
  if (budget !== null && !(Number.isFinite(budget) && budget >= 0 && budget <= 1e12)) {
    throw new LimitError('monthly_budget', 'monthly_budget must be an amount of 0 or more, or none.');
  }
  return { monthlyVideoSeconds: seconds, monthlyBudgetMicros: budget === null ? null : toMicros(budget) };
}

/** A limit written on a command line: a number, or `none` (no limit). */
export function parseLimitArgument(field: keyof PublicLimits, text: string): number | null {
  if (text.trim().toLowerCase() === 'none') return null;
  const value = Number(text);
  if (text.trim() === '' || !Number.isFinite(value)) {
    throw new LimitError(field, `${field} must be a number or "none", not ${JSON.stringify(text)}`);
  }
  return value;
}

export async function accountLimits(
  store: Pick<UsageStore, 'getAccountLimits'>,
  accountId: string,
): Promise<UsageLimits | undefined> {
  return store.getAccountLimits(accountId);
}

/** Changes what `changes` names and keeps the rest; false when there is no such account. */
export async function setAccountLimits(
  store: Pick<UsageStore, 'getAccountLimits' | 'setAccountLimits'>,
  accountId: string,
  changes: Partial<PublicLimits>,
): Promise<UsageLimits | undefined> {
  const current = await store.getAccountLimits(accountId);
  if (!current) return undefined;
  const limits = fromPublicLimits({ ...toPublicLimits(current), ...changes });
  return (await store.setAccountLimits(accountId, limits)) ? limits : undefined;
}

/**
 * Changes the limits of the one active key with this id or prefix (of `accountId`'s keys when given), keeping
 * what `changes` does not name; undefined unless exactly one active key matched.
 */
export async function setApiKeyLimits(
  store: Pick<ApiKeyStore, 'listApiKeys' | 'setApiKeyLimits'>,
  idOrPrefix: string,
  changes: Partial<PublicLimits>,
  accountId?: string,
): Promise<ApiKeyRecord | undefined> {
  const now = Date.now();
  const matches = (await store.listApiKeys(accountId)).filter(
    (key) => (key.id === idOrPrefix || key.prefix === idOrPrefix) && isActiveApiKey(key, now),
  );
  const only = matches.length === 1 ? matches[0] : undefined;
  if (!only) return undefined;
  const limits = fromPublicLimits({ ...toPublicLimits(only.limits), ...changes });
  return store.setApiKeyLimits(only.id, limits, accountId);
}
