/** The monthly limits as the dashboard's routes take and show them (usage-limits.ts keeps the rules). */
import { Type } from '@sinclair/typebox';
import { ApiError } from '../../domain/errors.js';
import { LimitError } from '../../usage/usage-limits.js';

const VideoSeconds = Type.Union([Type.Null(), Type.Integer({ minimum: 0 })], {
  description: 'Seconds of video a month (UTC calendar month); null: no limit.',
});
const Budget = Type.Union([Type.Null(), Type.Number({ minimum: 0 })], {
  description:
    'An amount of the configured prices’ currency a month; null: no limit. Holds only tasks of priced models.',
});

export const LimitsSchema = Type.Object({ monthly_video_seconds: VideoSeconds, monthly_budget: Budget });

/** A change of limits: the fields named are set, the others kept. */
export const LimitsChangeSchema = Type.Object(
  { monthly_video_seconds: Type.Optional(VideoSeconds), monthly_budget: Type.Optional(Budget) },
  { additionalProperties: false },
);

/** Runs a change of limits, answering `invalid_parameter` (naming the field) for a limit that cannot be one. */
export async function limitsChange<T>(run: () => T | Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (error) {
    if (error instanceof LimitError)
      throw new ApiError('invalid_parameter', error.message, { param: error.field });
    throw error;
  }
}
