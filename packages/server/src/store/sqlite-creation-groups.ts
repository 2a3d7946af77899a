/**
 * Creations on SQLite, grouped as they arrive (statement-groups.ts), each group one transaction: the creations
 * without monthly limits (the common case) run at once, their statements straight on the store's connection
 * (operations/create-unlimited-tasks-now.ts); through Kysely, each statement and savepoint cost promise hops that
 * were 40 % of the store's time per creation. The transaction holds Kysely's connection, so that no transaction
 * of its own is open meanwhile, and begins IMMEDIATE: it waits for another process's write (busy_timeout) at
 * its start rather than failing once it has read.
 *
 * The creations it leaves out (a limit applies) then run in the group transaction that checks limits
 * (group-commit.ts). If it fails it creates nothing, and every creation of the group runs there instead, each in
 * its savepoint: the one that caused the error gets it, the others are created.
 */
import type BetterSqlite3 from 'better-sqlite3';
import type { Kysely } from 'kysely';
import type { TaskRecord } from '../domain/task.js';
import type { NewTask } from '../ports/store.js';
import type { Database } from './database-schema.js';
import { groupCommit } from './group-commit.js';
import { insertTask } from './operations/create-task.js';
import { createUnlimitedTasksNow } from './operations/create-unlimited-tasks-now.js';
import type { SqliteStatements } from './sqlite-statements.js';
import { type Settled, StatementGroups } from './statement-groups.js';

export function sqliteCreationGroups(
  db: Kysely<Database>,
  connection: { readonly database: BetterSqlite3.Database; readonly statements: SqliteStatements },
  now: () => number,
): StatementGroups<NewTask, TaskRecord> {
  const checkingLimits = groupCommit(db, (trx, task: NewTask) => insertTask(trx, task, now(), false));
  const createAtOnce = connection.database.transaction((tasks: readonly NewTask[]) =>
    createUnlimitedTasksNow(connection.statements, tasks, now()),
  );
  return new StatementGroups(async (tasks) => {
    let created: Map<string, TaskRecord>;
    try {
      created = await db.connection().execute(async () => createAtOnce.immediate(tasks));
    } catch {
      return checkingLimits(tasks);
    }
    const left = tasks.filter((task) => !created.has(task.id));
    // That transaction failing fails only the creations left to it: those made at once are committed.
    const checked =
      left.length > 0
        ? await checkingLimits(left).catch((error: unknown) =>
            left.map((): Settled<TaskRecord> => ({ ok: false, error })),
          )
        : [];
    let next = 0;
    return tasks.map((task): Settled<TaskRecord> => {
      const record = created.get(task.id);
      if (record) return { ok: true, result: record };
      return checked[next++] ?? { ok: false, error: new Error('a grouped creation had no outcome') };
    });
  });
}
