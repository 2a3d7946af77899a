/**
 * The body of the SQLite checkpointer's worker thread (sqlite-checkpointer.ts): a connection of its own that
 * copies the WAL into the database file every `intervalMs`, so that the copy and its fsync happen off the event
 * loop. PASSIVE: it never waits for, nor blocks, the store's readers and writer.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { openDatabase, pragma } from './sqlite-handles.js';

const { path, intervalMs } = workerData as { path: string; intervalMs: number };
const database = openDatabase(path);
pragma(database, 'busy_timeout = 5000');
const timer = setInterval(() => {
  try {
    pragma(database, 'wal_checkpoint(PASSIVE)');
  } catch (error) {
    parentPort?.postMessage({ error: error instanceof Error ? error.message : String(error) });
  }
}, intervalMs);
parentPort?.on('message', (message) => {
  if (message !== 'close') return;
  clearInterval(timer);
  database.close();
  parentPort?.close();
});
