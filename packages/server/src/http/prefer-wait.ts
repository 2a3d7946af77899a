/**
 * `Prefer: wait=N` (RFC 7240 §4.3) on task creation and query: the answer is held until the task is final or
 * N seconds have passed, then given as usual, with `Preference-Applied: wait=N`.
 */
import { type TSchema, Type } from '@sinclair/typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { isFinal, type PublicTask } from '../domain/task.js';
import { watchTask } from '../tasks/task-watch.js';
import { answerSignal } from './answer-signal.js';
import { TaskSchema } from './schemas.js';

/** The longest wait honoured; a longer one is cut to this. */
export const MAX_WAIT_SECONDS = 60;

/** The request header, for the routes' schemas (documentation: the handler parses it, ignoring a bad one). */
export const PreferWaitHeaders = Type.Object({
  prefer: Type.Optional(
    Type.String({
      description:
        '`wait=N`: hold the answer until the task is `completed` or `failed`, or N seconds have passed ' +
        '(at most 60), then answer as usual. A malformed preference is ignored.',
      examples: ['wait=30'],
    }),
  ),
});

/**
 * The 200 answer of a route that honours `Prefer: wait`: the task, and `Preference-Applied`, besides the route's
 * own `headers`.
 */
export function TaskAnswerWithWait(description: string, headers: Record<string, TSchema> = {}) {
  return {
    description,
    headers: {
      'Preference-Applied': Type.String({
        description: '`wait=N` when the request asked to wait (N cut to 60).',
      }),
      ...headers,
    },
    content: { 'application/json': { schema: Type.Ref(TaskSchema) } },
  };
}

/** Separators between preferences (`,`) and parameters (`;`), outside quoted strings. */
const SEPARATOR = /[,;](?=(?:[^"]*"[^"]*")*[^"]*$)/;

/**
 * The `wait` preference of a `Prefer` header, in seconds, at most MAX_WAIT_SECONDS: undefined when there is
 * none or it is malformed (RFC 7240 §2: a preference the server does not understand is ignored). Lenient about
 * what surrounds it: other preferences may come before or after, separated by commas or semicolons. Only the
 * first `wait` counts (RFC 7240 §2).
 */
export function parsePreferWait(header: string | string[] | undefined): number | undefined {
  if (header === undefined) return undefined;
  const text = Array.isArray(header) ? header.join(',') : header;
  for (const part of text.split(SEPARATOR)) {
    const match = /^\s*([^\s=]+)\s*(?:=\s*(.*?))?\s*$/.exec(part);
    if (match?.[1]?.toLowerCase() !== 'wait') continue;
    const value = match[2]?.replace(/^"(.*)"$/, '$1');
    if (value === undefined || !/^\d+$/.test(value)) return undefined;
    return Math.min(Number(value), MAX_WAIT_SECONDS);
  }
  return undefined;
}

/**
 * Honours the request's `Prefer: wait=N`: with it, holds the answer until the task is final, N seconds pass,
 * the client goes away or the server starts closing, and answers the last state read (marked
 * `Preference-Applied`); without it, answers `task` as it is.
 */
export async function withPreferredWait(
  request: FastifyRequest,
  reply: FastifyReply,
  task: PublicTask,
  load: () => Promise<PublicTask>,
  closing: AbortSignal,
): Promise<PublicTask> {
  const seconds = parsePreferWait(request.headers.prefer);
  if (seconds === undefined) return task;
  reply.header('preference-applied', `wait=${seconds}`);
  if (seconds === 0 || isFinal(task.status)) return task;
  const signal = answerSignal(reply, closing, seconds * 1000);
  let latest = task;
  try {
    for await (const snapshot of watchTask(load, { first: task, signal })) latest = snapshot;
  } catch (error) {
    // The answer so far is true (and for a creation, the task exists): a failed re-read ends the wait, not
    // the request.
    request.log.warn(
      { err: error, task_id: task.id },
      'waiting on the task failed; answering its last state',
    );
  }
  return latest;
}
