/** The `--monthly-video-seconds` and `--monthly-budget` flags of `keys` and `accounts`. */
import type { UsageLimits } from '../domain/usage.js';
import { LimitError, type PublicLimits, parseLimitArgument, toPublicLimits } from '../usage/usage-limits.js';
import { UsageError } from './usage-error.js';

export const LIMIT_OPTIONS = {
  'monthly-video-seconds': { type: 'string' },
  'monthly-budget': { type: 'string' },
} as const;

/** The limits the flags name (`none` clears one); the others are left out, to be kept. */
export function limitChanges(values: {
  'monthly-video-seconds'?: string | undefined;
  'monthly-budget'?: string | undefined;
}): Partial<PublicLimits> {
  try {
    const seconds = values['monthly-video-seconds'];
    const budget = values['monthly-budget'];
    return {
      ...(seconds === undefined
        ? {}
        : { monthly_video_seconds: parseLimitArgument('monthly_video_seconds', seconds) }),
      ...(budget === undefined ? {} : { monthly_budget: parseLimitArgument('monthly_budget', budget) }),
    };
  } catch (error) {
    throw error instanceof LimitError ? new UsageError(error.message) : error;
  }
}

/** Runs a change of limits, telling a limit that cannot be one as a usage error. */
export async function asUsageError<T>(run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (error) {
    throw error instanceof LimitError ? new UsageError(error.message) : error;
  }
}

/** `600 s/month, budget 25/month`, or `no limits`. */
export function describeLimits(limits: UsageLimits): string {
  const shown = toPublicLimits(limits);
  const parts = [
    shown.monthly_video_seconds === null ? undefined : `${shown.monthly_video_seconds} video s/month`,
    shown.monthly_budget === null ? undefined : `budget ${shown.monthly_budget}/month`,
  ].filter((part) => part !== undefined);
  return parts.length === 0 ? 'no limits' : parts.join(', ');
}
