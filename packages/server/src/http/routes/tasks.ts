/** `GET /v1/tasks/{task_id}`: query a task (interface §4.2). */
import type { FastifyInstance, preHandlerAsyncHookHandler } from 'fastify';
import type { TaskService } from '../../task-service.js';
import { principalOf } from '../authentication.js';

export function taskRoutes(
  app: FastifyInstance,
  deps: { tasks: TaskService; authenticate: preHandlerAsyncHookHandler },
) {
  app.get<{ Params: { task_id: string } }>(
    '/v1/tasks/:task_id',
    { preHandler: deps.authenticate },
    async (request) => deps.tasks.get(principalOf(request), request.params.task_id),
  );
}
