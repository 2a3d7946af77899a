/**
 * PostgreSQL: a worker pool holds a session-level advisory lock on a connection of its own for as long as it
 * runs. When its process dies, however it dies, the kernel closes that connection, PostgreSQL ends the session
 * and the lock is gone at once; other processes see that in `pg_locks` and requeue the dead pool's tasks
 * (operations/requeue-orphaned-tasks.ts) instead of waiting for their leases to run out. A connection lost
 * while the process lives is reopened and the lock taken again; its tasks may meanwhile have been requeued,
 * and its fenced writes then fail like those of an expired lease.
 */
import pg from 'pg';
import type { WorkerLock } from '../../ports/store.js';
import { WORKER_LOCK_CLASS } from '../worker-lock-class.js';

const RECONNECT_MS = 1000;

export async function holdPgWorkerLock(
  options: { connectionString: string; schema: string; onError?: (error: Error) => void },
  workerId: string,
): Promise<WorkerLock> {
  let client: pg.Client | undefined;
  let released = false;
  let retry: NodeJS.Timeout | undefined;

  const connect = async (): Promise<void> => {
    const next = new pg.Client({
      connectionString: options.connectionString,
      application_name: 'videogen-worker',
    });
    next.on('error', (error) => options.onError?.(error));
    next.on('end', () => {
      if (released || client !== next) return;
      client = undefined;
      retry = setTimeout(() => void connect().catch(() => undefined), RECONNECT_MS);
    });
    await next.connect();
    await next.query('select pg_advisory_lock($1, hashtext($2))', [
      WORKER_LOCK_CLASS,
      `${options.schema}:${workerId}`,
    ]);
    if (released) {
      await next.end();
      return;
    }
    client = next;
  };

  await connect();
  return {
    async release() {
      released = true;
      clearTimeout(retry);
      const held = client;
      client = undefined;
      // Ending the session releases the lock.
      await held?.end().catch(() => undefined);
    },
  };
}
