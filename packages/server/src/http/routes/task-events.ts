/**
 * `GET /v1/tasks/{task_id}/events`: the task's status and progress as Server-Sent Events, one `task` event per
 * change, ending after the final one.
 */
import { PassThrough } from 'node:stream';
import { Type } from '@sinclair/typebox';
import type { FastifyInstance, preHandlerAsyncHookHandler } from 'fastify';
import type { Metrics } from '../../metrics.js';
import type { TaskService } from '../../tasks/task-service.js';
import { watchTask } from '../../tasks/task-watch.js';
import { answerSignal, closingSignal } from '../answer-signal.js';
import { principalOf } from '../authentication.js';
import { requestOrigin } from '../request-origin.js';
import { API_KEY_SECURITY, AUTHENTICATED_ERRORS, errorResponses, TaskIdParams } from '../schemas.js';

/** A comment line this often keeps proxies and load balancers from closing a quiet stream. */
export const KEEP_ALIVE_MS = 15_000;

/**
 * An event stream of `events`: each one a `task` event (`id` counting from 1, `data` its JSON), a
 * `: keep-alive` comment every `keepAliveMs`, and the end once `events` ends. An error of `events` is handed
 * to `onError` and ends the stream as well: the headers are gone, so the client sees a stream that stopped
 * before a final state.
 */
export function eventStream(
  events: AsyncIterable<unknown>,
  options: {
    keepAliveMs: number;
    onError: (error: unknown) => void;
    /** Once `events` is done: it reads nothing more. */
    onEnd?: () => void;
  },
): PassThrough {
  const stream = new PassThrough();
  const write = (text: string) => {
    if (!stream.destroyed && !stream.writableEnded) stream.write(text);
  };
  const keepAlive = setInterval(() => write(': keep-alive\n\n'), options.keepAliveMs);
  void (async () => {
    let id = 0;
    try {
      for await (const event of events) {
        id += 1;
        write(`event: task\nid: ${id}\ndata: ${JSON.stringify(event)}\n\n`);
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

export function taskEventRoutes(
  app: FastifyInstance,
  deps: { tasks: TaskService; authenticate: preHandlerAsyncHookHandler; metrics?: Metrics },
) {
  const closing = closingSignal(app);
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
          '`progress`; the stream ends after the event with `completed` or `failed`. A `: keep-alive` comment ' +
          'comes every 15 s. The `data` of each event is the task as `GET /v1/tasks/{task_id}` returns it.',
        operationId: 'streamTaskEvents',
        tags: ['Tasks'],
        security: API_KEY_SECURITY,
        params: TaskIdParams,
        response: {
          200: {
            description: 'The event stream.',
            content: {
              'text/event-stream': {
                schema: Type.String({
                  description: 'Events `event: task`, `id: <n>` (from 1), `data: <the task as JSON>`.',
                  examples: [
                    'event: task\nid: 1\ndata: {"id":"task-unified-…","status":"processing","progress":40,…}\n\n',
                  ],
                }),
              },
            },
          },
          ...errorResponses(...AUTHENTICATED_ERRORS, 'task_not_found'),
        },
      },
    },
    async (request, reply) => {
      const scope = principalOf(request);
      const origin = requestOrigin(request);
      const load = () => deps.tasks.get(scope, request.params.task_id, origin);
      // Read before answering, so an unknown task is the usual 404 with a JSON body.
      const first = await load();
      const snapshots = watchTask(load, { first, signal: answerSignal(reply, closing) });
      deps.metrics?.eventStreamsOpen.inc();
      const stream = eventStream(snapshots, {
        keepAliveMs: KEEP_ALIVE_MS,
        onError: (error) => request.log.error({ err: error }, 'task event stream failed'),
        onEnd: () => deps.metrics?.eventStreamsOpen.dec(),
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
