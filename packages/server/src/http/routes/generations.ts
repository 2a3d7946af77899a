/** `POST /v1/videos/generations`: create a generation task (interface §4.1). */
import { Type } from '@sinclair/typebox';
import type { FastifyInstance, preHandlerAsyncHookHandler } from 'fastify';
import { requestSchemaOf } from '../../domain/generation-request.js';
import type { PublicTask } from '../../domain/task.js';
import type { TaskService } from '../../tasks/task-service.js';
import { closingSignal } from '../answer-signal.js';
import { principalOf } from '../authentication.js';
import { emptyBody } from '../error-handler.js';
import { IDEMPOTENCY_HEADER, parseIdempotencyKey } from '../idempotency-key-header.js';
import { PreferWaitHeaders, TaskAnswerWithWait, withPreferredWait } from '../prefer-wait.js';
import { requestOrigin } from '../request-origin.js';
import { API_KEY_SECURITY, CREATION_ERRORS, errorResponses } from '../schemas.js';

export function generationRoutes(
  app: FastifyInstance,
  deps: { tasks: TaskService; authenticate: preHandlerAsyncHookHandler; maxBodyBytes: number },
) {
  const closing = closingSignal(app);
  app.post(
    '/v1/videos/generations',
    // The schema is attached for documentation; the domain parser validates, so that every error names
    // its field with the codes of docs/decisions.md#errors.
    {
      preHandler: deps.authenticate,
      // Inline `data:` assets make this the one large body; every other route keeps the app's small limit.
      bodyLimit: deps.maxBodyBytes,
      schema: {
        summary: 'Create a video generation task',
        description:
          'Answers with the new task, `pending`; poll `GET /v1/tasks/{task_id}` or wait for callbacks.',
        operationId: 'createGeneration',
        tags: ['Generations'],
        security: API_KEY_SECURITY,
        body: requestSchemaOf(deps.tasks.catalogue),
        headers: Type.Object({
          ...PreferWaitHeaders.properties,
          [IDEMPOTENCY_HEADER.toLowerCase()]: Type.Optional(
            Type.String({
              minLength: 1,
              maxLength: 255,
              description:
                'Makes retries safe: a repeat of the same request with the same key within 24 hours returns the task it created (with `Idempotent-Replayed: true`); another request under the key is `409 idempotency_conflict`.',
            }),
          ),
        }),
        response: {
          200: TaskAnswerWithWait('The task, `pending` (with `Prefer: wait`, as it is when the wait ends).', {
            'Idempotent-Replayed': Type.Literal('true', {
              description: 'The answer is the task an earlier request with this `Idempotency-Key` created.',
            }),
          }),
          ...errorResponses(...CREATION_ERRORS),
        },
      },
      validatorCompiler: () => () => true,
    },
    async (request, reply) => {
      if (request.body === undefined) throw emptyBody();
      const origin = requestOrigin(request);
      const answer = (task: PublicTask) =>
        withPreferredWait(
          request,
          reply,
          task,
          () => deps.tasks.get(principalOf(request), task.id, origin),
          closing,
        );
      const key = parseIdempotencyKey(request.headers['idempotency-key']);
      if (key === undefined)
        return answer(await deps.tasks.create(principalOf(request), request.body, origin));
      const { task, replayed } = await deps.tasks.createOnce(principalOf(request), request.body, key, origin);
      if (replayed) reply.header('idempotent-replayed', 'true');
      return answer(task);
    },
  );
}
