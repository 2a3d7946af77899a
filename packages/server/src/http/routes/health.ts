/** Liveness (`/healthz`: the process answers) and readiness (`/readyz`: the store answers and we are not draining). */
import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';

const Status = (values: string[], description: string) =>
  Type.Object({ status: Type.Unsafe<string>({ type: 'string', enum: values }) }, { description });

const READYZ_SCHEMA = {
  summary: 'Readiness',
  description: 'Answers 200 when the store answers and the server is not shutting down, 503 otherwise.',
  operationId: 'readyz',
  tags: ['Operations'],
  response: {
    200: Status(['ready'], 'Ready to serve.'),
    503: Status(['draining', 'store_unavailable'], 'Shutting down, or the store does not answer.'),
  },
};

export function healthRoutes(
  app: FastifyInstance,
  deps: { storeAnswers: () => Promise<void>; isDraining: () => boolean },
) {
  app.get(
    '/healthz',
    {
      schema: {
        summary: 'Liveness',
        description: 'Answers 200 while the process runs.',
        operationId: 'healthz',
        tags: ['Operations'],
        response: { 200: Status(['ok'], 'The process runs.') },
      },
    },
    async () => ({ status: 'ok' }),
  );
  app.get('/readyz', { schema: READYZ_SCHEMA }, async (_request, reply) => {
    if (deps.isDraining()) return reply.code(503).send({ status: 'draining' });
    try {
      await deps.storeAnswers();
    } catch (error) {
      reply.log.warn({ err: error }, 'store not ready');
      return reply.code(503).send({ status: 'store_unavailable' });
    }
    return { status: 'ready' };
  });
}
