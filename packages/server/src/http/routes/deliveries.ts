/** A task's callback delivery log, and sending its latest state again (docs/decisions.md#callbacks). */
import { Type } from '@sinclair/typebox';
import type { FastifyInstance, preHandlerAsyncHookHandler } from 'fastify';
import type { TaskService } from '../../tasks/task-service.js';
import { principalOf } from '../authentication.js';
import {
  API_KEY_SECURITY,
  AUTHENTICATED_ERRORS,
  DeliverySchema,
  errorResponses,
  ListOf,
  TaskIdParams,
  WRITE_ERRORS,
} from '../schemas.js';

export function deliveryRoutes(
  app: FastifyInstance,
  deps: { tasks: TaskService; authenticate: preHandlerAsyncHookHandler },
) {
  app.get<{ Params: { task_id: string } }>(
    '/v1/tasks/:task_id/deliveries',
    {
      preHandler: deps.authenticate,
      schema: {
        summary: "List a task's callback deliveries",
        description: 'Oldest first, each with every attempt.',
        operationId: 'listDeliveries',
        tags: ['Callbacks'],
        security: API_KEY_SECURITY,
        params: TaskIdParams,
        response: {
          200: ListOf(DeliverySchema, "The task's deliveries."),
          ...errorResponses(...AUTHENTICATED_ERRORS, 'task_not_found'),
        },
      },
    },
    async (request) => ({
      object: 'list',
      data: await deps.tasks.deliveries(principalOf(request), request.params.task_id),
    }),
  );

  app.post<{ Params: { task_id: string } }>(
    '/v1/tasks/:task_id/deliveries/redeliver',
    {
      preHandler: deps.authenticate,
      schema: {
        summary: "Send a task's current state again",
        description:
          'A new message (a new `webhook-id`) to the `callback_url`, whatever happened to earlier ones.',
        operationId: 'redeliver',
        tags: ['Callbacks'],
        security: API_KEY_SECURITY,
        params: TaskIdParams,
        response: {
          202: Type.Ref(DeliverySchema, { description: 'The new delivery, `pending`.' }),
          ...errorResponses(
            ...AUTHENTICATED_ERRORS,
            'task_not_found',
            'callback_not_configured',
            ...WRITE_ERRORS,
          ),
        },
      },
    },
    async (request, reply) => {
      const delivery = await deps.tasks.redeliver(principalOf(request), request.params.task_id);
      return reply.code(202).send(delivery);
    },
  );
}
