/** What the dashboard shows of a task beyond the public API: the request it was created with. */
import { Type } from '@sinclair/typebox';
import type { FastifyInstance, preValidationAsyncHookHandler } from 'fastify';
import type { TaskService } from '../../tasks/task-service.js';
import { signedInSession } from '../authentication.js';
import { requestOrigin } from '../request-origin.js';
import { DASHBOARD_SECURITY, errorResponses, TaskIdParams } from '../schemas.js';

export function dashboardTaskRoutes(
  app: FastifyInstance,
  deps: { tasks: TaskService; requireSession: preValidationAsyncHookHandler },
) {
  app.get<{ Params: { task_id: string } }>(
    '/dashboard/api/tasks/:task_id/request',
    {
      preValidation: deps.requireSession,
      schema: {
        summary: 'The request a task was created with',
        description:
          "The body of the creation: uploaded files by their URLs (`…/v1/files/{id}/content`), inline `data:` assets as the service's storage references (`storage:assets/…`).",
        operationId: 'getTaskRequest',
        tags: ['Dashboard'],
        security: DASHBOARD_SECURITY,
        params: TaskIdParams,
        response: {
          200: Type.Object({
            request: Type.Object({ model: Type.String() }, { additionalProperties: true }),
          }),
          ...errorResponses('not_signed_in', 'task_not_found', 'internal_error'),
        },
      },
    },
    async (request) => {
      const { accountId, environment } = signedInSession(request);
      return {
        request: await deps.tasks.request(
          { accountId, environment },
          request.params.task_id,
          requestOrigin(request),
        ),
      };
    },
  );
}
