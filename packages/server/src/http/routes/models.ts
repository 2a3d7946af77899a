/** `GET /v1/models` and `GET /v1/models/{model_id}`: the catalogue as this gateway serves it (model-list.ts). */
import type { FastifyInstance, preHandlerAsyncHookHandler } from 'fastify';
import type { ModelList } from '../../models/model-list.js';
import {
  API_KEY_SECURITY,
  AUTHENTICATED_ERRORS,
  errorResponses,
  ModelIdParams,
  ModelListSchema,
  ModelSchema,
} from '../schemas.js';

export function modelRoutes(
  app: FastifyInstance,
  deps: { models: ModelList; authenticate: preHandlerAsyncHookHandler },
) {
  app.get(
    '/v1/models',
    {
      preHandler: deps.authenticate,
      schema: {
        summary: 'List models',
        description:
          'Every model ID with its mode, the inputs it takes, its durations, qualities and aspect ratios, and whether it can run now.',
        operationId: 'listModels',
        tags: ['Models'],
        security: API_KEY_SECURITY,
        response: { 200: ModelListSchema, ...errorResponses(...AUTHENTICATED_ERRORS) },
      },
    },
    async () => deps.models.list(),
  );
  app.get<{ Params: { model_id: string } }>(
    '/v1/models/:model_id',
    {
      preHandler: deps.authenticate,
      schema: {
        summary: 'Get a model',
        operationId: 'getModel',
        tags: ['Models'],
        security: API_KEY_SECURITY,
        params: ModelIdParams,
        response: { 200: ModelSchema, ...errorResponses(...AUTHENTICATED_ERRORS, 'model_not_found') },
      },
    },
    async (request) => deps.models.get(request.params.model_id),
  );
}
