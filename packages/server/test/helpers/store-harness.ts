/** What every store conformance suite runs its tests in: an empty, migrated store and a clock of its own. */
import type { Store } from '../../src/ports/store.js';

export interface Clock {
  now: number;
}

/** Where every test's clock starts (epoch milliseconds). */
export const T0 = 1_700_000_000_000;

export type WithStore = (test: (store: Store, clock: Clock) => Promise<void>) => Promise<void>;

/** Runs each test on a store from `open`, migrated, with a clock at `T0`; closes the store afterwards. */
export function storeHarness(open: (clock: Clock) => Promise<Store>): WithStore {
  return async (test) => {
    const clock: Clock = { now: T0 };
    const store = await open(clock);
    try {
      await store.migrate();
      await test(store, clock);
    } finally {
      await store.close();
    }
  };
}
