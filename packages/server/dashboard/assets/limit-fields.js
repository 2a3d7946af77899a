// @ts-check
/** The two monthly limit inputs (video seconds, budget) of the keys page and the usage page; blank is no limit. */
import { field, h } from './dom.js';

/**
 * `600 video s, 25 USD a month`, or `None`. Without a currency (none configured, or not known) the budget is
 * said to be one: `budget 25 a month`.
 */
/**
 * @param {MonthlyLimits} limits
 * @param {string | null | undefined} currency
 */
export function describeLimits(limits, currency) {
  const parts = [];
  if (limits.monthly_video_seconds !== null) parts.push(`${limits.monthly_video_seconds} video s`);
  if (limits.monthly_budget !== null)
    parts.push(currency ? `${limits.monthly_budget} ${currency}` : `budget ${limits.monthly_budget}`);
  return parts.length === 0 ? 'None' : `${parts.join(', ')} a month`;
}

/**
 * Inputs filled from `limits` (none when absent); `read()` gives the body fields, null for a blank one, and
 * `fill(limits)` shows limits as saved. `currency` (null: no prices configured) is said in the budget's hint.
 */
/**
 * @param {MonthlyLimits | undefined} limits
 * @param {string | null | undefined} currency
 */
export function limitFields(limits, currency) {
  const seconds = h('input', {
    type: 'number',
    name: 'monthly_video_seconds',
    min: '0',
    step: '1',
    inputmode: 'numeric',
  });
  // Any step: a budget set with the CLI may have up to six decimals, and must not make the form invalid.
  const budget = h('input', {
    type: 'number',
    name: 'monthly_budget',
    min: '0',
    step: 'any',
    inputmode: 'decimal',
  });
  /** @param {MonthlyLimits | undefined} next */
  const fill = (next) => {
    seconds.value = String(next?.monthly_video_seconds ?? '');
    budget.value = String(next?.monthly_budget ?? '');
  };
  fill(limits);
  /** @param {HTMLInputElement} input */
  const number = (input) => (input.value.trim() === '' ? null : Number(input.value));
  const budgetHint =
    currency === null
      ? 'Blank: no limit. No prices are configured, so a budget holds no task.'
      : `Blank: no limit. In ${currency ?? 'the currency of the configured prices'}; only priced tasks count.`;
  return {
    fields: [
      field('Monthly video seconds', seconds, 'Blank: no limit. Counts completed and running tasks.'),
      field('Monthly budget', budget, budgetHint),
    ],
    read: () => ({ monthly_video_seconds: number(seconds), monthly_budget: number(budget) }),
    fill,
  };
}
