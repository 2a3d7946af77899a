/**
 * `GET /metrics`: Prometheus text format. Unauthenticated like the health checks; expose it only where the
 * scraper can reach it (docs/deployment.md).
 */
import type { FastifyInstance } from 'fastify';
import type { Metrics } from '../../metrics.js';

export function metricsRoutes(app: FastifyInstance, deps: { metrics: Metrics }) {
  const schema = {
    summary: 'Prometheus metrics',
    description: 'The metrics in the Prometheus text format; docs/api.md lists them.',
    operationId: 'metrics',
    tags: ['Operations'],
    response: {
      200: {
        description: 'The metrics.',
        content: { [deps.metrics.registry.contentType]: { schema: { type: 'string' } } },
      },
    },
  };
  app.get('/metrics', { schema }, async (_request, reply) => {
    const body = await deps.metrics.registry.metrics();
    return reply.type(deps.metrics.registry.contentType).send(body);
  });
}
