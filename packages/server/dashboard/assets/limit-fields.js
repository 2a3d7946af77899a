/** The two monthly limit inputs (video seconds, budget) of the keys page and the usage page; blank is no limit. */
import { field, h } from './dom.js';

/** `600 s, 25 USD a month`, or `None`. */
export function describeLimits(limits, currency) {
  const parts = [];
  if (limits.monthly_video_seconds !== null) parts.push(`${limits.monthly_video_seconds} video s`);
  if (limits.monthly_budget !== null) parts.push(`${limits.monthly_budget}${currency ? ` ${currency}` : ''}`);
  return parts.length === 0 ? 'None' : `${parts.join(', ')} a month`;
}

/** Inputs filled from `limits` (none when absent); `read()` gives the body fields, null for a blank one. */
export function limitFields(limits) {
  const seconds = h('input', {
    type: 'number',
    name: 'monthly_video_seconds',
    min: '0',
    step: '1',
    inputmode: 'numeric',
    value: limits?.monthly_video_seconds ?? '',
  });
  const budget = h('input', {
    type: 'number',
    name: 'monthly_budget',
    min: '0',
    step: '0.01',
    inputmode: 'decimal',
    value: limits?.monthly_budget ?? '',
  });
  const number = (input) => (input.value.trim() === '' ? null : Number(input.value));
  return {
    fields: [
      field('Monthly video seconds', seconds, 'Blank: no limit. Counts completed and running tasks.'),
      field('Monthly budget', budget, 'Blank: no limit. In the currency of the configured prices.'),
    ],
    read: () => ({ monthly_video_seconds: number(seconds), monthly_budget: number(budget) }),
  };
}
