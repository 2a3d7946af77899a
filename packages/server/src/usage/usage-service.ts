/** The usage use cases: the account's usage report, and this month's use against its limits. */
import type { Prices } from '../domain/prices.js';
import type { TaskScope } from '../domain/task.js';
import { monthStart, nextMonthStart } from '../domain/usage.js';
import { parseUsageQuery, type UsageReport, usageReport } from '../domain/usage-report.js';
import type { UsageStore } from '../ports/store.js';

export class UsageService {
  readonly #store: Pick<UsageStore, 'listUsage'>;
  readonly #prices: Prices | undefined;
  readonly #now: () => number;

  constructor(options: {
    store: Pick<UsageStore, 'listUsage'>;
    prices?: Prices | undefined;
    now?: () => number;
  }) {
    this.#store = options.store;
    this.#prices = options.prices;
    this.#now = options.now ?? Date.now;
  }

  /** The currency of the configured prices; undefined without prices. */
  get currency(): string | undefined {
    return this.#prices?.currency;
  }

  /** `GET /v1/usage`: the scope's usage (its account, in its environment) over the query's range. */
  async report(scope: TaskScope, rawQuery: Record<string, unknown>): Promise<UsageReport> {
    const query = parseUsageQuery(rawQuery, this.#now());
    const sums = await this.#store.listUsage(scope.accountId, { ...query, environment: scope.environment });
    return usageReport(query, sums, this.currency);
  }

  /**
   * This month's usage of the whole account (every environment, as its limits count it), grouped by `groupBy`:
   * what the dashboard shows against the limits.
   */
  async thisMonth(accountId: string, groupBy: 'model' | 'api_key'): Promise<UsageReport> {
    const now = this.#now();
    const query = { start: monthStart(now), end: nextMonthStart(now), groupBy };
    return usageReport(query, await this.#store.listUsage(accountId, query), this.currency);
  }
}
