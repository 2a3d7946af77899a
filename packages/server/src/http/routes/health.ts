/**
 * Liveness (`/healthz`: the process answers) and readiness (`/readyz`: the store answers, no write failed for
 * lack of space lately, and we are not draining).
 */
import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';

const Status = (values: string[], description: string) =>
  Type.Object({ status: Type.Unsafe<string>({ type: 'string', enum: values }) }, { description });

const READYZ_SCHEMA = {
  summary: 'Readiness',
  description:
    'Answers 200 when the store answers, no write failed for lack of space in the last 30 s and the server is ' +
    'not shutting down; 503 otherwise.',
  operationId: 'readyz',
  tags: ['Operations'],
  response: {
    200: Status(['ready'], 'Ready to serve.'),
    503: Status(
      ['draining', 'storage_full', 'store_unavailable'],
      'Shutting down, writes failing for lack of space, or the store does not answer.',
    ),
  },
};

export function healthRoutes(
  app: FastifyInstance,
  deps: {
    storeAnswers: () => Promise<void>;
    isDraining: () => boolean;
    /** Whether writes failed for lack of space lately (process/space-alarm.ts). */
    storageFull?: () => boolean;
  },
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
    if (deps.storageFull?.()) return reply.code(503).send({ status: 'storage_full' });
    try {
      await deps.storeAnswers();
    } catch (error) {
      reply.log.warn({ err: error }, 'store not ready');
      return reply.code(503).send({ status: 'store_unavailable' });
    }
    return { status: 'ready' };
  });
}
