/**
 * PostgreSQL: the class half of a worker pool's advisory lock key (pg-worker-lock.ts); the other half hashes the
 * schema and the worker id. Apart from the lock, which loads pg, because the SQLite store's operations read it too.
 */
export const WORKER_LOCK_CLASS = 0x76670002;
