/** Liveness (`/healthz`: the process answers) and readiness (`/readyz`: the store answers and we are not draining). */
import type { FastifyInstance } from 'fastify';
import type { Store } from '../../ports/store.js';

export function healthRoutes(app: FastifyInstance, deps: { store: Store; isDraining: () => boolean }) {
  app.get('/healthz', async () => ({ status: 'ok' }));
  app.get('/readyz', async (_request, reply) => {
    if (deps.isDraining()) return reply.code(503).send({ status: 'draining' });
    try {
      await deps.store.ping();
    } catch (error) {
      reply.log.warn({ err: error }, 'store not ready');
      return reply.code(503).send({ status: 'store_unavailable' });
    }
    return { status: 'ready' };
  });
}
