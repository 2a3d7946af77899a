/** `GET /v1/usage`: the account's usage over a time range, grouped by day, model or API key, with totals. */
import { Type } from '@sinclair/typebox';
import type { FastifyInstance, preHandlerAsyncHookHandler } from 'fastify';
import { USAGE_GROUPINGS } from '../../domain/usage.js';
import type { UsageService } from '../../usage/usage-service.js';
import { principalOf } from '../authentication.js';
import { API_KEY_SECURITY, AUTHENTICATED_ERRORS, errorResponses, UsageReportSchema } from '../schemas.js';

export function usageRoutes(
  app: FastifyInstance,
  deps: { usage: UsageService; authenticate: preHandlerAsyncHookHandler },
) {
  app.get<{ Querystring: Record<string, unknown> }>(
    '/v1/usage',
    // The schema documents; the domain parser validates, so every error names its parameter.
    {
      preHandler: deps.authenticate,
      schema: {
        summary: 'Usage',
        description:
          "Video seconds and cost of the key's account and environment over a range of task creation times, " +
          'grouped by UTC day, model or API key, with totals. Only completed tasks count; tasks still running ' +
          'are given as `reserved`.',
        operationId: 'getUsage',
        tags: ['Usage'],
        security: API_KEY_SECURITY,
        querystring: Type.Object({
          start: Type.Optional(
            Type.Integer({
              minimum: 0,
              description: 'Unix seconds, inclusive; the start of this UTC month by default.',
            }),
          ),
          end: Type.Optional(
            Type.Integer({
              minimum: 0,
              description: 'Unix seconds, exclusive; the start of the month after `start` by default.',
            }),
          ),
          group_by: Type.Optional(
            Type.Unsafe<(typeof USAGE_GROUPINGS)[number]>({
              type: 'string',
              enum: [...USAGE_GROUPINGS],
              default: 'day',
            }),
          ),
        }),
        response: {
          200: UsageReportSchema,
          ...errorResponses(...AUTHENTICATED_ERRORS, 'invalid_parameter', 'unknown_parameter'),
        },
      },
      validatorCompiler: () => () => true,
    },
    async (request) => deps.usage.report(principalOf(request), request.query),
  );
}
