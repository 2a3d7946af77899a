/**
 * Prices of video, per second, by model ID and quality (the engines file's `prices`), and the cost of a task.
 * Money is kept in integer micro-units (millionths of the currency): sums in SQL and in JavaScript stay exact.
 */
import type { Quality } from './frame-size.js';
import type { ModelId } from './models.js';

export const MICROS_PER_UNIT = 1_000_000;

export interface Prices {
  /** An ISO 4217 code as written in the file, e.g. `USD`. */
  readonly currency: string;
  /** Micro-units per second of video; a model or quality left out has no known price. */
  readonly perSecond: ReadonlyMap<ModelId, Partial<Readonly<Record<Quality, number>>>>;
}

/** A currency amount (as written in a file or a request) in micro-units, rounded to the nearest one. */
export function toMicros(amount: number): number {
  return Math.round(amount * MICROS_PER_UNIT);
}

/** Micro-units as a currency amount, for answers and metrics. */
export function fromMicros(micros: number): number {
  return micros / MICROS_PER_UNIT;
}

/** What `seconds` of `model` at `quality` cost, in micro-units; null when no price is configured for it. */
export function costMicros(
  prices: Prices | undefined,
  model: ModelId,
  quality: Quality,
  seconds: number,
): number | null {
  const perSecond = prices?.perSecond.get(model)?.[quality];
  return perSecond === undefined ? null : perSecond * seconds;
}
