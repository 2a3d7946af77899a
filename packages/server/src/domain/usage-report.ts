/**
 * The usage report of `GET /v1/usage`: the query (a range in Unix seconds, the current UTC month by default, and a
 * grouping) and the answer built from the store's sums. Only settled usage (completed tasks) counts in the
 * figures; reservations of tasks still running are given apart.
 */
import { ApiError } from './errors.js';
import { fromMicros } from './prices.js';
import { monthStart, nextMonthStart, USAGE_GROUPINGS, type UsageGrouping } from './usage.js';

export interface UsageReportQuery {
  /** Epoch ms, inclusive. */
  readonly start: number;
  /** Epoch ms, exclusive. */
  readonly end: number;
  readonly groupBy: UsageGrouping;
}

export interface UsageFigures {
  tasks: number;
  video_seconds: number;
  /** In the prices' currency; only when prices are configured. Tasks without a price count nothing. */
  cost?: number;
}

export interface UsageBucket extends UsageFigures {
  object: 'usage.bucket';
  /** `YYYY-MM-DD` (UTC), a model ID, or an API key id (null: tasks created from the dashboard). */
  key: string | null;
  /** Tasks created in the range and not finished yet: what they will use if they complete. */
  reserved: UsageFigures;
}

export interface UsageReport {
  object: 'list';
  group_by: UsageGrouping;
  /** Unix seconds, inclusive. */
  start: number;
  /** Unix seconds, exclusive. */
  end: number;
  /** Only when prices are configured. */
  currency?: string;
  data: UsageBucket[];
  totals: UsageFigures & { reserved: UsageFigures };
}

/** One group of usage records of one state, as the store sums them. */
export interface UsageSum {
  readonly key: string | null;
  readonly state: 'reserved' | 'settled';
  readonly tasks: number;
  readonly videoSeconds: number;
  readonly costMicros: number | null;
}

function parseSeconds(raw: unknown, name: string): number | undefined {
  if (raw === undefined || raw === '') return undefined;
  const text = String(raw);
  if (!/^\d{1,12}$/.test(text)) {
    throw new ApiError('invalid_parameter', `${name} must be Unix seconds (a whole number).`, {
      param: name,
    });
  }
  return Number(text) * 1000;
}

/** Reads `start`, `end` and `group_by`; the current UTC month and `day` by default. */
export function parseUsageQuery(query: Record<string, unknown>, now: number): UsageReportQuery {
  for (const name of Object.keys(query)) {
    if (!['start', 'end', 'group_by'].includes(name)) {
      throw new ApiError('unknown_parameter', `Unknown query parameter ${name}.`, { param: name });
    }
  }
  const start = parseSeconds(query.start, 'start') ?? monthStart(now);
  const end = parseSeconds(query.end, 'end') ?? nextMonthStart(start);
  if (end <= start) throw new ApiError('invalid_parameter', 'end must be after start.', { param: 'end' });
  const groupBy = query.group_by ?? 'day';
  if (!USAGE_GROUPINGS.includes(groupBy as UsageGrouping)) {
    throw new ApiError('invalid_parameter', `group_by must be one of ${USAGE_GROUPINGS.join(', ')}.`, {
      param: 'group_by',
    });
  }
  return { start, end, groupBy: groupBy as UsageGrouping };
}

function figures(tasks: number, seconds: number, micros: number, currency: string | undefined): UsageFigures {
  return {
    tasks,
    video_seconds: seconds,
    ...(currency === undefined ? {} : { cost: fromMicros(micros) }),
  };
}

interface Tally {
  tasks: number;
  seconds: number;
  micros: number;
}

const emptyTally = (): Tally => ({ tasks: 0, seconds: 0, micros: 0 });

function add(tally: Tally, sum: UsageSum): void {
  tally.tasks += sum.tasks;
  tally.seconds += sum.videoSeconds;
  tally.micros += sum.costMicros ?? 0;
}

/** The answer: a bucket per key (in key order, dashboard tasks last), totals, and the range in Unix seconds. */
export function usageReport(
  query: UsageReportQuery,
  sums: readonly UsageSum[],
  currency: string | undefined,
): UsageReport {
  const buckets = new Map<string | null, { settled: Tally; reserved: Tally }>();
  const totals = { settled: emptyTally(), reserved: emptyTally() };
  for (const sum of sums) {
    let bucket = buckets.get(sum.key);
    if (!bucket) {
      bucket = { settled: emptyTally(), reserved: emptyTally() };
      buckets.set(sum.key, bucket);
    }
    add(bucket[sum.state], sum);
    add(totals[sum.state], sum);
  }
  const keys = [...buckets.keys()].sort((a, b) =>
    a === null ? 1 : b === null ? -1 : a < b ? -1 : a > b ? 1 : 0,
  );
  const present = (tally: Tally) => figures(tally.tasks, tally.seconds, tally.micros, currency);
  return {
    object: 'list',
    group_by: query.groupBy,
    start: Math.floor(query.start / 1000),
    end: Math.floor(query.end / 1000),
    ...(currency === undefined ? {} : { currency }),
    data: keys.map((key) => {
      const bucket = buckets.get(key) ?? { settled: emptyTally(), reserved: emptyTally() };
      return { object: 'usage.bucket', key, ...present(bucket.settled), reserved: present(bucket.reserved) };
    }),
    totals: { ...present(totals.settled), reserved: present(totals.reserved) },
  };
}
