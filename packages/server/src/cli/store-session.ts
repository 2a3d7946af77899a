/** What the store-backed commands share: a migrated store for one action, and plain-text tables. */
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

/** Columns padded to their widest cell, two spaces apart. */
export function printTable(header: readonly string[], rows: readonly (readonly string[])[]): void {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => String(r[i] ?? '').length)));
  for (const row of [header, ...rows]) {
    process.stdout.write(
      `${row
        .map((cell, i) => String(cell).padEnd(widths[i] ?? 0))
        .join('  ')
        .trimEnd()}\n`,
    );
  }
}
