/**
 * The statements of `GET /v1/tasks` whose query plans the SQLite and PostgreSQL tests check: a first and a deep
 * page for every filter combination the API allows, compiled without a database.
 */
import {
  DummyDriver,
  Kysely,
  PostgresAdapter,
  PostgresIntrospector,
  PostgresQueryCompiler,
  SqliteAdapter,
  SqliteIntrospector,
  SqliteQueryCompiler,
} from 'kysely';
import type { ModelId } from '../../src/domain/models.js';
import type { TaskScope } from '../../src/domain/task.js';
import type { TaskListQuery } from '../../src/ports/store.js';
import type { Database } from '../../src/store/database-schema.js';
import { taskPageQuery } from '../../src/store/operations/list-tasks.js';

export interface PlannedPage {
  readonly name: string;
  readonly query: TaskListQuery;
}

const MODEL: ModelId = 'videogen-2.0-image-to-video';
const AT = 1_700_000_500_000;

/** Every combination of status, model and creation window, each as a first page and a page after a cursor. */
export function plannedPages(): PlannedPage[] {
  const pages: PlannedPage[] = [];
  for (const status of [undefined, 'failed'] as const) {
    for (const model of [undefined, MODEL]) {
      for (const window of [
        {},
        { createdAfter: AT - 100_000 },
        { createdAfter: AT - 100_000, createdBefore: AT + 1000 },
      ]) {
        for (const after of [undefined, { createdAt: AT, id: 'task-unified-M000000000000000000000000000' }]) {
          const query: TaskListQuery = {
            limit: 20,
            ...(status ? { status } : {}),
            ...(model ? { model } : {}),
            ...window,
            ...(after ? { after } : {}),
          };
          pages.push({ name: JSON.stringify(query), query });
        }
      }
    }
  }
  return pages;
}

function compilerOnly(dialect: 'sqlite' | 'postgres'): Kysely<Database> {
  return new Kysely<Database>({
    dialect: {
      createAdapter: () => (dialect === 'sqlite' ? new SqliteAdapter() : new PostgresAdapter()),
      createDriver: () => new DummyDriver(),
      createIntrospector: (db) =>
        dialect === 'sqlite' ? new SqliteIntrospector(db) : new PostgresIntrospector(db),
      createQueryCompiler: () =>
        dialect === 'sqlite' ? new SqliteQueryCompiler() : new PostgresQueryCompiler(),
    },
  });
}

/** The SQL and parameters `listTasks` sends for `query`. */
export function compiledPage(
  dialect: 'sqlite' | 'postgres',
  scope: TaskScope,
  query: TaskListQuery,
): { sql: string; parameters: readonly unknown[] } {
  const { sql, parameters } = taskPageQuery(compilerOnly(dialect), scope, query).compile();
  return { sql, parameters };
}
