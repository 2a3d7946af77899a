/** A task's callback delivery log, and sending its latest state again (decisions.md §5). */
import type { FastifyInstance, preHandlerAsyncHookHandler } from 'fastify';
import type { TaskService } from '../../task-service.js';
import { principalOf } from '../authentication.js';

export function deliveryRoutes(
  app: FastifyInstance,
  deps: { tasks: TaskService; authenticate: preHandlerAsyncHookHandler },
) {
  app.get<{ Params: { task_id: string } }>(
    '/v1/tasks/:task_id/deliveries',
    { preHandler: deps.authenticate },
    async (request) => ({
      object: 'list',
      data: await deps.tasks.deliveries(principalOf(request), request.params.task_id),
    }),
  );

  app.post<{ Params: { task_id: string } }>(
    '/v1/tasks/:task_id/deliveries/redeliver',
    { preHandler: deps.authenticate },
    async (request, reply) => {
      const delivery = await deps.tasks.redeliver(principalOf(request), request.params.task_id);
      return reply.code(202).send(delivery);
    },
  );
}
