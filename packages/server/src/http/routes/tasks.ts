/**
 * Tasks: `GET /v1/tasks/{task_id}` (interface §4.2), and what the interface leaves out but clients expect:
 * `GET /v1/tasks` (list), `POST /v1/tasks/{task_id}/cancel`, `DELETE /v1/tasks/{task_id}`.
 */
import { Type } from '@sinclair/typebox';
import type { FastifyInstance, preHandlerAsyncHookHandler } from 'fastify';
import { parseTaskListQuery, TaskListQuerySchema } from '../../domain/task-list-query.js';
import type { TaskService } from '../../tasks/task-service.js';
import { closingSignal } from '../answer-signal.js';
import { principalOf } from '../authentication.js';
import { PreferWaitHeaders, TaskAnswerWithWait, withPreferredWait } from '../prefer-wait.js';
import { requestOrigin } from '../request-origin.js';
import {
  API_KEY_SECURITY,
  AUTHENTICATED_ERRORS,
  DeletedTaskSchema,
  errorResponses,
  TaskIdParams,
  TaskListSchema,
  TaskSchema,
  WRITE_ERRORS,
} from '../schemas.js';

export function taskRoutes(
  app: FastifyInstance,
  deps: { tasks: TaskService; authenticate: preHandlerAsyncHookHandler },
) {
  const closing = closingSignal(app);
  app.get<{ Querystring: Record<string, unknown> }>(
    '/v1/tasks',
    // The schema documents; the domain parser validates, so every error names its parameter.
    {
      preHandler: deps.authenticate,
      schema: {
        summary: 'List tasks',
        description: "The key's account and environment's tasks, newest first, a page at a time.",
        operationId: 'listTasks',
        tags: ['Tasks'],
        security: API_KEY_SECURITY,
        querystring: TaskListQuerySchema,
        response: {
          200: TaskListSchema,
          ...errorResponses(...AUTHENTICATED_ERRORS, 'invalid_parameter', 'unknown_parameter'),
        },
      },
      validatorCompiler: () => () => true,
    },
    async (request) =>
      deps.tasks.list(
        principalOf(request),
        parseTaskListQuery(request.query, deps.tasks.catalogue),
        requestOrigin(request),
      ),
  );
  app.get<{ Params: { task_id: string } }>(
    '/v1/tasks/:task_id',
    {
      preHandler: deps.authenticate,
      schema: {
        summary: 'Get a task',
        description:
          'Poll until `status` is `completed` (the video is `results[0]`) or `failed` (see `error`).',
        operationId: 'getTask',
        tags: ['Tasks'],
        security: API_KEY_SECURITY,
        params: TaskIdParams,
        headers: PreferWaitHeaders,
        response: {
          200: TaskAnswerWithWait('The task.'),
          ...errorResponses(...AUTHENTICATED_ERRORS, 'task_not_found'),
        },
      },
    },
    async (request, reply) => {
      const load = () => deps.tasks.get(principalOf(request), request.params.task_id, requestOrigin(request));
      return withPreferredWait(request, reply, await load(), load, closing);
    },
  );
  app.post<{ Params: { task_id: string } }>(
    '/v1/tasks/:task_id/cancel',
    {
      preHandler: deps.authenticate,
      schema: {
        summary: 'Cancel a task',
        description:
          'Stops a `pending` or `processing` task: it becomes `failed` with the error `cancelled`.',
        operationId: 'cancelTask',
        tags: ['Tasks'],
        security: API_KEY_SECURITY,
        params: TaskIdParams,
        response: {
          200: Type.Ref(TaskSchema, { description: 'The task, `failed` with `cancelled`.' }),
          ...errorResponses(
            ...AUTHENTICATED_ERRORS,
            'task_not_found',
            'task_not_cancellable',
            ...WRITE_ERRORS,
          ),
        },
      },
    },
    async (request) =>
      deps.tasks.cancel(principalOf(request), request.params.task_id, requestOrigin(request)),
  );
  app.delete<{ Params: { task_id: string } }>(
    '/v1/tasks/:task_id',
    {
      preHandler: deps.authenticate,
      schema: {
        summary: 'Delete a task',
        description: 'Deletes a finished task with its video and stored assets.',
        operationId: 'deleteTask',
        tags: ['Tasks'],
        security: API_KEY_SECURITY,
        params: TaskIdParams,
        response: {
          200: DeletedTaskSchema,
          ...errorResponses(...AUTHENTICATED_ERRORS, 'task_not_found', 'task_not_deletable', ...WRITE_ERRORS),
        },
      },
    },
    async (request) => deps.tasks.delete(principalOf(request), request.params.task_id),
  );
}
