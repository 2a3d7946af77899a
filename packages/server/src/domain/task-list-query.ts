/**
 * The query of `GET /v1/tasks`: `limit` (1-100, default 20), `after` (the `next_cursor` of the previous
 * page), `status`, `model`, `created_after` and `created_before` (Unix seconds). Cursors are opaque to
 * clients: the position of a page's last task, encoded.
 */
import { type Static, Type } from '@sinclair/typebox';
import { ApiError } from './errors.js';
import type { ModelCatalogue } from './model-catalogue.js';
import { MODEL_ID_PATTERN, type ModelId } from './models.js';
import { TASK_STATUSES, type TaskRecord, type TaskStatus } from './task.js';

/** A validated query, times in epoch ms. */
export interface TaskListQuery {
  /** 1..100. */
  readonly limit: number;
  /** Only tasks after this position (the last task of the previous page) in newest-first order. */
  readonly after?: { readonly createdAt: number; readonly id: string };
  readonly status?: TaskStatus;
  readonly model?: ModelId;
  /** Epoch ms, inclusive. */
  readonly createdAfter?: number;
  /** Epoch ms, exclusive. */
  readonly createdBefore?: number;
}

export const DEFAULT_PAGE_SIZE = 20;
export const MAX_PAGE_SIZE = 100;

/** For documentation (OpenAPI); `parseTaskListQuery` validates, so every error names its parameter. */
export const TaskListQuerySchema = Type.Object({
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_PAGE_SIZE, default: DEFAULT_PAGE_SIZE })),
  after: Type.Optional(Type.String({ description: 'The next_cursor of the previous page.' })),
  status: Type.Optional(Type.Union(TASK_STATUSES.map((s) => Type.Literal(s)))),
  model: Type.Optional(
    Type.String({ pattern: MODEL_ID_PATTERN, description: 'A model ID or alias of `GET /v1/models`.' }),
  ),
  created_after: Type.Optional(Type.Integer({ minimum: 0, description: 'Unix seconds, inclusive.' })),
  created_before: Type.Optional(Type.Integer({ minimum: 0, description: 'Unix seconds, exclusive.' })),
});

export type TaskListQueryParams = Static<typeof TaskListQuerySchema>;

function invalid(param: string, message: string): ApiError {
  return new ApiError('invalid_parameter', message, { param });
}

function integer(raw: unknown, param: string, min: number, max: number): number | undefined {
  if (raw === undefined) return undefined;
  const value = typeof raw === 'string' && /^\d+$/.test(raw) ? Number(raw) : Number.NaN;
  if (!Number.isSafeInteger(value) || value < min || value > max) {
    throw invalid(param, `${param} must be an integer from ${min} to ${max}.`);
  }
  return value;
}

export function encodeCursor(task: Pick<TaskRecord, 'createdAt' | 'id'>): string {
  return Buffer.from(`${task.createdAt}.${task.id}`).toString('base64url');
}

function decodeCursor(raw: string): { createdAt: number; id: string } {
  const match = /^(\d{1,16})\.(task-[A-Za-z0-9-]{1,100})$/.exec(Buffer.from(raw, 'base64url').toString());
  if (!match?.[1] || !match[2]) throw invalid('after', 'after must be a next_cursor from a previous page.');
  return { createdAt: Number(match[1]), id: match[2] };
}

/** `catalogue`: the server's; an alias filters by its model's ID. */
export function parseTaskListQuery(
  query: Readonly<Record<string, unknown>>,
  catalogue: ModelCatalogue,
): TaskListQuery {
  const known = new Set(Object.keys(TaskListQuerySchema.properties));
  for (const name of Object.keys(query)) {
    if (!known.has(name)) {
      throw new ApiError('unknown_parameter', `Unknown query parameter ${name}.`, { param: name });
    }
  }
  const one = (name: string): unknown => {
    const value = query[name];
    if (Array.isArray(value)) throw invalid(name, `${name} may be given once.`);
    return value;
  };
  const status = one('status');
  if (status !== undefined && !TASK_STATUSES.includes(status as TaskStatus)) {
    throw invalid('status', `status must be one of ${TASK_STATUSES.join(', ')}.`);
  }
  const name = one('model');
  const model = name === undefined ? undefined : catalogue.find(String(name))?.id;
  if (name !== undefined && model === undefined) {
    throw invalid('model', `model must be one of ${catalogue.ids().join(', ')}.`);
  }
  const after = one('after');
  if (after !== undefined && typeof after !== 'string') throw invalid('after', 'after must be a string.');
  const createdAfter = integer(one('created_after'), 'created_after', 0, 1e11);
  const createdBefore = integer(one('created_before'), 'created_before', 0, 1e11);
  return {
    limit: integer(one('limit'), 'limit', 1, MAX_PAGE_SIZE) ?? DEFAULT_PAGE_SIZE,
    ...(after !== undefined ? { after: decodeCursor(after) } : {}),
    ...(status !== undefined ? { status: status as TaskStatus } : {}),
    ...(model !== undefined ? { model } : {}),
    ...(createdAfter !== undefined ? { createdAfter: createdAfter * 1000 } : {}),
    ...(createdBefore !== undefined ? { createdBefore: createdBefore * 1000 } : {}),
  };
}
