/** What the store-backed commands share: a migrated store for one action. */
import { openStore } from '../adapters.js';
import { loadConfig } from '../config.js';
import type { Store } from '../ports/store.js';

export async function withStore<T>(action: (store: Store) => Promise<T>): Promise<T> {
  const config = loadConfig();
  const store = openStore(config.databaseUrl, { schema: config.databaseSchema });
  try {
    await store.migrate();
    return await action(store);
  } finally {
    await store.close();
  }
}
