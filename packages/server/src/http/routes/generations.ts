/** `POST /v1/videos/generations`: create a generation task (interface §4.1). */
import type { FastifyInstance, preHandlerAsyncHookHandler } from 'fastify';
import { GenerationRequestSchema } from '../../domain/generation-request.js';
import type { TaskService } from '../../task-service.js';
import { principalOf } from '../authentication.js';

export function generationRoutes(
  app: FastifyInstance,
  deps: { tasks: TaskService; authenticate: preHandlerAsyncHookHandler },
) {
  app.post(
    '/v1/videos/generations',
    // The schema is attached for documentation; the domain parser validates, so that every error names
    // its field with the codes of decisions.md §3.
    {
      preHandler: deps.authenticate,
      schema: { body: GenerationRequestSchema },
      validatorCompiler: () => () => true,
    },
    async (request) => deps.tasks.create(principalOf(request), request.body),
  );
}
