/**
 * `GET /v1/tasks/{task_id}/events`: the task's status and progress as Server-Sent Events, one `task` event per
 * change, ending after the final one. Each event's id is the task's revision, so a client reconnecting with
 * `Last-Event-ID` resumes after it, and one that has the final state is told `204` (which stops `EventSource`).
 */
import { PassThrough } from 'node:stream';
import { Type } from '@sinclair/typebox';
import type { FastifyInstance, preHandlerAsyncHookHandler } from 'fastify';
import type { EventStreamLimits } from '../../config.js';
import type { Metrics } from '../../metrics.js';
import type { TaskEvent, TaskService } from '../../tasks/task-service.js';
import { answerSignal, closingSignal } from '../answer-signal.js';
import { principalOf, rateLimitSubject } from '../authentication.js';
import { EventStreamSlots } from '../event-stream-slots.js';
import { requestOrigin } from '../request-origin.js';
import { API_KEY_SECURITY, AUTHENTICATED_ERRORS, errorResponses, TaskIdParams } from '../schemas.js';

/** A comment line this often keeps proxies and load balancers from closing a quiet stream. */
export const KEEP_ALIVE_MS = 15_000;

/**
 * How soon a client reconnects after the stream ends before the final state (its lifetime, a restart), sent as
 * `retry:` at the start of every stream. Writing something at once also sends the headers at once: a resumed
 * stream may have no event to send for a long time.
 */
export const RECONNECT_MS = 3000;

/** What an event stream sends of each event: its `id` and its `data`, as JSON. */
export interface StreamEvent {
  readonly id: number;
  readonly data: unknown;
}

/**
 * An event stream of `events`: `retry: <retryMs>` first when given, then each event a `task` event (its `id`,
 * its `data` as JSON), a `: keep-alive` comment every `keepAliveMs`, and the end once `events` ends. An error of `events` is handed to `onError` and
 * ends the stream as well: the headers are gone, so the client sees a stream that stopped before a final state.
 */
export function eventStream(
  events: AsyncIterable<StreamEvent>,
  options: {
    keepAliveMs: number;
    retryMs?: number;
    onError: (error: unknown) => void;
    /** Once `events` is done: it reads nothing more. */
    onEnd?: () => void;
  },
): PassThrough {
  const stream = new PassThrough();
  const write = (text: string) => {
    if (!stream.destroyed && !stream.writableEnded) stream.write(text);
  };
  if (options.retryMs !== undefined) write(`retry: ${options.retryMs}\n\n`);
  const keepAlive = setInterval(() => write(': keep-alive\n\n'), options.keepAliveMs);
  void (async () => {
    try {
      for await (const { id, data } of events) {
        write(`event: task\nid: ${id}\ndata: ${JSON.stringify(data)}\n\n`);
      }
    } catch (error) {
      options.onError(error);
    } finally {
      clearInterval(keepAlive);
      if (!stream.destroyed) stream.end();
      options.onEnd?.();
    }
  })();
  return stream;
}

/** `Last-Event-ID` as a revision; anything else (absent, or not an id this route gives) counts for nothing. */
export function parseLastEventId(header: string | string[] | undefined): number | undefined {
  return typeof header === 'string' && /^\d{1,15}$/.test(header) ? Number(header) : undefined;
}

export function taskEventRoutes(
  app: FastifyInstance,
  deps: {
    tasks: TaskService;
    authenticate: preHandlerAsyncHookHandler;
    limits: EventStreamLimits;
    metrics?: Metrics;
  },
) {
  const closing = closingSignal(app);
  const slots = new EventStreamSlots(deps.limits);
  const lifetime = `${Math.round(deps.limits.lifetimeMs / 1000)} s`;
  app.get<{ Params: { task_id: string } }>(
    '/v1/tasks/:task_id/events',
    {
      preHandler: deps.authenticate,
      // A HEAD would run the handler and hold an empty answer open until the task ends.
      exposeHeadRoute: false,
      schema: {
        summary: "Stream a task's progress",
        description:
          'Server-Sent Events: a `task` event with the task at once, then one at every change of `status` or ' +
          '`progress`; the stream ends after the event with `completed` or `failed`, or after its lifetime ' +
          `(at most ${lifetime}; reconnect with \`Last-Event-ID\`). A \`: keep-alive\` comment comes every 15 s. ` +
          'The `data` of each event is the task as `GET /v1/tasks/{task_id}` returns it; its `id` is the ' +
          "task's revision, which grows at every change. Open streams are capped per key and per server " +
          '(`429 rate_limited` with `Retry-After`).',
        operationId: 'streamTaskEvents',
        tags: ['Tasks'],
        security: API_KEY_SECURITY,
        params: TaskIdParams,
        headers: Type.Object({
          'last-event-id': Type.Optional(
            Type.String({
              description:
                'The `id` of the last event the client got (`EventSource` sends it when it reconnects): the ' +
                'stream resumes after it, and is `204` if that event was the final one. Another value is ignored.',
              examples: ['7'],
            }),
          ),
        }),
        response: {
          200: {
            description: 'The event stream.',
            content: {
              'text/event-stream': {
                schema: Type.String({
                  description:
                    "Events `event: task`, `id: <the task's revision>`, `data: <the task as JSON>`.",
                  examples: [
                    'event: task\nid: 3\ndata: {"id":"task-unified-…","status":"processing","progress":40,…}\n\n',
                  ],
                }),
              },
            },
          },
          204: {
            description:
              'The `Last-Event-ID` is the final event of the task: there is nothing more to send (`EventSource` stops).',
            type: 'null',
          },
          ...errorResponses(...AUTHENTICATED_ERRORS, 'task_not_found'),
        },
      },
    },
    async (request, reply) => {
      const principal = principalOf(request);
      const ends = new AbortController();
      // Read before answering, so an unknown task is the usual 404 with a JSON body. Nothing is watched until the
      // stream starts reading `events`.
      const events = await deps.tasks.events(principal, request.params.task_id, {
        after: parseLastEventId(request.headers['last-event-id']),
        signal: ends.signal,
        origin: requestOrigin(request),
      });
      if (!events) return reply.code(204).header('cache-control', 'no-cache').send();
      const slot = slots.take(rateLimitSubject(principal));
      const answered = answerSignal(reply, closing, slot.lifetimeMs);
      answered.addEventListener('abort', () => ends.abort(), { once: true });
      deps.metrics?.eventStreamsOpen.inc();
      const stream = eventStream(withIds(events), {
        keepAliveMs: KEEP_ALIVE_MS,
        retryMs: RECONNECT_MS,
        onError: (error) => request.log.error({ err: error }, 'task event stream failed'),
        onEnd: () => {
          slot.release();
          deps.metrics?.eventStreamsOpen.dec();
        },
      });
      // Sent as a stream, not hijacked: Fastify writes the headers set so far (x-request-id, RateLimit-*),
      // ends the response when the stream ends, and then runs onResponse (the request's log line, metrics).
      return reply
        .header('content-type', 'text/event-stream')
        .header('cache-control', 'no-cache')
        .header('x-accel-buffering', 'no')
        .send(stream);
    },
  );
}

async function* withIds(events: AsyncIterable<TaskEvent>): AsyncGenerator<StreamEvent> {
  for await (const { revision, task } of events) yield { id: revision, data: task };
}
