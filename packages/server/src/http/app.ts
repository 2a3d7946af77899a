/**
 * The Fastify application: request ids, one log line per request, errors, authentication and the routes.
 * An API process serves everything; a worker process only its health checks.
 */
import { randomBytes } from 'node:crypto';
import Fastify, { type FastifyInstance, LogController } from 'fastify';
import type { Logger } from 'pino';
import type { Metrics } from '../metrics.js';
import type { Storage } from '../ports/storage.js';
import type { Store } from '../ports/store.js';
import type { ResultLinks } from '../result-links.js';
import type { TaskService } from '../task-service.js';
import { createAuthenticator } from './authentication.js';
import { errorHandler, notFoundHandler } from './error-handler.js';
import { deliveryRoutes } from './routes/deliveries.js';
import { generationRoutes } from './routes/generations.js';
import { healthRoutes } from './routes/health.js';
import { metricsRoutes } from './routes/metrics.js';
import { resultRoutes } from './routes/results.js';
import { taskRoutes } from './routes/tasks.js';

export interface ApiDependencies {
  readonly tasks: TaskService;
  readonly links: ResultLinks;
  readonly storage: Storage;
}

export interface AppDependencies {
  readonly store: Store;
  readonly metrics: Metrics;
  readonly logger: Logger;
  readonly maxBodyBytes: number;
  readonly isDraining: () => boolean;
  /** The public API; a worker process leaves it out and serves only its health checks. */
  readonly api?: ApiDependencies;
}

export function buildApp(deps: AppDependencies): FastifyInstance {
  const app = Fastify({
    loggerInstance: deps.logger,
    // Fastify's own two lines per request are off: the onResponse hook below writes one.
    logController: new LogController({ disableRequestLogging: true, requestIdLogLabel: 'request_id' }),
    bodyLimit: deps.maxBodyBytes,
    genReqId: () => `req_${randomBytes(12).toString('base64url')}`,
    return503OnClosing: true,
  }) as unknown as FastifyInstance;

  app.addHook('onRequest', async (request, reply) => {
    reply.header('x-request-id', request.id);
  });
  // One line per request. The path is logged without its query string: result links carry signatures.
  app.addHook('onResponse', async (request, reply) => {
    deps.metrics.httpDuration.observe(
      {
        method: request.method,
        route: request.routeOptions.url ?? 'unmatched',
        status_code: reply.statusCode,
      },
      reply.elapsedTime / 1000,
    );
    request.log.info(
      {
        method: request.method,
        path: request.url.split('?')[0],
        status: reply.statusCode,
        ms: Math.round(reply.elapsedTime),
        key_id: request.principal?.keyId,
      },
      'request',
    );
  });
  app.setErrorHandler(errorHandler);
  app.setNotFoundHandler(notFoundHandler);

  healthRoutes(app, { store: deps.store, isDraining: deps.isDraining });
  metricsRoutes(app, { metrics: deps.metrics });
  const { api } = deps;
  if (api) {
    const authenticate = createAuthenticator(deps.store);
    generationRoutes(app, { tasks: api.tasks, authenticate });
    taskRoutes(app, { tasks: api.tasks, authenticate });
    deliveryRoutes(app, { tasks: api.tasks, authenticate });
    resultRoutes(app, { links: api.links, storage: api.storage });
  }
  return app;
}
