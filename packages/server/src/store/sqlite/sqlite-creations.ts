/**
 * Creations on SQLite, grouped as they arrive (statement-groups.ts), each group one transaction: the creations
 * without monthly limits whose keys are new (the common case) run at once, their statements straight on the
 * store's connection (sqlite-create-tasks.ts); through Kysely, each statement and savepoint cost promise hops
 * that were 40 % of the store's time per creation. The transaction holds Kysely's connection, so that no
 * transaction of its own is open meanwhile, and begins IMMEDIATE: it waits for another process's write
 * (busy_timeout) at its start rather than failing once it has read.
 *
 * The creations it leaves out (a limit applies, a key has a row) then run in the group transaction that checks
 * limits and sorts keys out (sqlite-group-commit.ts, operations/create-task.ts). If it fails it creates nothing,
 * and every creation of the group runs there instead, each in its savepoint: the one that caused the error gets
 * it, the others are created.
 */
import type BetterSqlite3 from 'better-sqlite3';
import type { Kysely } from 'kysely';
import type { TaskRecord } from '../../domain/task.js';
import type { IdempotentCreation } from '../../ports/store.js';
import type { Database } from '../database-schema.js';
import { type Creation, createTask } from '../operations/create-task.js';
import { type Settled, StatementGroups } from '../statement-groups.js';
import type { TaskCreations } from '../task-creations.js';
import { createTasksNow } from './sqlite-create-tasks.js';
import { groupCommit } from './sqlite-group-commit.js';
import type { SqliteStatements } from './sqlite-statements.js';

export function sqliteCreations(
  db: Kysely<Database>,
  connection: { readonly database: BetterSqlite3.Database; readonly statements: SqliteStatements },
): TaskCreations {
  const checkingLimits = groupCommit(db, (trx, creation: Creation) => createTask(trx, creation, false));
  const createAtOnce = connection.database.transaction((creations: readonly Creation[]) =>
    createTasksNow(connection.statements, creations),
  );
  const groups = new StatementGroups<Creation, IdempotentCreation>(async (creations) => {
    let created: Map<string, TaskRecord>;
    try {
      created = await db.connection().execute(async () => createAtOnce.immediate(creations));
    } catch {
      return checkingLimits(creations);
    }
    const left = creations.filter(({ task }) => !created.has(task.id));
    // That transaction failing fails only the creations left to it: those made at once are committed.
    const checked =
      left.length > 0
        ? await checkingLimits(left).catch((error: unknown) =>
            left.map((): Settled<IdempotentCreation> => ({ ok: false, error })),
          )
        : [];
    let next = 0;
    return creations.map(({ task }): Settled<IdempotentCreation> => {
      const record = created.get(task.id);
      if (record) return { ok: true, result: { outcome: 'created', task: record } };
      return checked[next++] ?? { ok: false, error: new Error('a grouped creation had no outcome') };
    });
  });
  return { create: (creation) => groups.submit(creation), drain: () => groups.drain() };
}
