/**
 * Usage and budgets: what a task uses (video seconds and, with prices, cost), the calendar month a monthly
 * limit counts (UTC), and the check of a creation against the limits of its account and API key.
 */
import { fromMicros } from './prices.js';

/** The monthly limits of an account or an API key; null is no limit. */
export interface UsageLimits {
  readonly monthlyVideoSeconds: number | null;
  /** Micro-units of the prices' currency. */
  readonly monthlyBudgetMicros: number | null;
}

export const NO_LIMITS: UsageLimits = { monthlyVideoSeconds: null, monthlyBudgetMicros: null };

/** What a task uses, or what a period's tasks used. */
export interface UsageAmount {
  readonly videoSeconds: number;
  /** Micro-units; null when no price is known (a sum counts the priced tasks only). */
  readonly costMicros: number | null;
}

export const USAGE_GROUPINGS = ['day', 'model', 'api_key'] as const;
export type UsageGrouping = (typeof USAGE_GROUPINGS)[number];

/** The start (epoch ms) of the UTC calendar month `at` falls in. */
export function monthStart(at: number): number {
  const date = new Date(at);
  return Date.UTC(date.getUTCFullYear(), date.getUTCMonth(), 1);
}

/** The start (epoch ms) of the UTC calendar month after the one `at` falls in: when monthly limits reset. */
export function nextMonthStart(at: number): number {
  const date = new Date(at);
  return Date.UTC(date.getUTCFullYear(), date.getUTCMonth() + 1, 1);
}

export type LimitHolder = 'account' | 'api_key';

/** Why a creation was refused: the limit it would pass. */
export interface BudgetRefusal {
  readonly holder: LimitHolder;
  readonly measure: 'video_seconds' | 'cost';
  /** Video seconds, or micro-units. */
  readonly limit: number;
  /** This month's settled and reserved usage, in the limit's unit. */
  readonly used: number;
  /** What the task would add, in the limit's unit. */
  readonly needed: number;
  /** Epoch ms: the start of next month (UTC). */
  readonly resetsAt: number;
}

/** Thrown by the store when a creation would pass a limit; nothing of the creation is kept. */
export class BudgetExceeded extends Error {
  readonly refusal: BudgetRefusal;

  constructor(refusal: BudgetRefusal) {
    super(`monthly ${refusal.measure} limit of the ${refusal.holder} exceeded`);
    this.name = 'BudgetExceeded';
    this.refusal = refusal;
  }
}

/**
 * The first limit of `limits` that `needed` on top of `used` would pass. A task without a known cost is not held
 * to a cost budget (nothing known to count); its video seconds still are.
 */
export function exceededLimit(
  holder: LimitHolder,
  limits: UsageLimits,
  used: UsageAmount,
  needed: UsageAmount,
  resetsAt: number,
): BudgetRefusal | undefined {
  const seconds = limits.monthlyVideoSeconds;
  if (seconds !== null && used.videoSeconds + needed.videoSeconds > seconds) {
    return {
      holder,
      measure: 'video_seconds',
      limit: seconds,
      used: used.videoSeconds,
      needed: needed.videoSeconds,
      resetsAt,
    };
  }
  const budget = limits.monthlyBudgetMicros;
  const cost = needed.costMicros;
  const spent = used.costMicros ?? 0;
  if (budget !== null && cost !== null && spent + cost > budget) {
    return { holder, measure: 'cost', limit: budget, used: spent, needed: cost, resetsAt };
  }
  return undefined;
}

/** `2026-12-01T00:00:00Z`. */
function isoSeconds(epochMs: number): string {
  return `${new Date(epochMs).toISOString().slice(0, 19)}Z`;
}

function money(micros: number, currency: string): string {
  return `${fromMicros(micros)} ${currency}`;
}

/** The `budget_exceeded` message: the limit, what is used or reserved this month, what the task needs, when the limit resets. */
export function budgetMessage(refusal: BudgetRefusal, currency: string): string {
  const whose = refusal.holder === 'account' ? "This account's" : "This API key's";
  const resets = `the limit resets ${isoSeconds(refusal.resetsAt)}.`;
  if (refusal.measure === 'video_seconds') {
    return (
      `${whose} monthly limit of ${refusal.limit} video seconds would be exceeded: ${refusal.used} s used or ` +
      `reserved this month, this task needs ${refusal.needed} s; ${resets}`
    );
  }
  return (
    `${whose} monthly budget of ${money(refusal.limit, currency)} would be exceeded: ` +
    `${money(refusal.used, currency)} used or reserved this month, this task costs ` +
    `${money(refusal.needed, currency)}; ${resets}`
  );
}
