/** The composition root: wires config, adapters, the task service, the worker pool and the HTTP app. */
import { randomBytes } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import { openStorage, openStore } from './adapters.js';
import type { Config } from './config.js';
import { EngineRouter } from './engines/engine-router.js';
import { LocalEngine } from './engines/local/local-engine.js';
import { buildApp } from './http/app.js';
import { createGuardedDispatcher } from './outbound/guarded-dispatcher.js';
import type { Store } from './ports/store.js';
import { ResultLinks } from './result-links.js';
import { WorkerPool } from './runner/worker-pool.js';
import { TaskService } from './task-service.js';
import { WebhookDispatcher } from './webhooks/webhook-dispatcher.js';

export interface Service {
  readonly app: FastifyInstance;
  readonly store: Store;
  readonly pool: WorkerPool;
  readonly webhooks: WebhookDispatcher;
  /** The base URL clients reach this server at. */
  readonly publicUrl: string;
  /** Stops accepting requests and claiming tasks, finishes or releases running tasks, closes the store. */
  close(): Promise<void>;
}

export async function startService(config: Config, logger: Logger): Promise<Service> {
  const store = openStore(config.databaseUrl);
  await store.migrate();
  const storage = openStorage(config.storageUrl);
  const secret = await store.getOrCreateSecret('result_links', () => randomBytes(32).toString('base64url'));

  let publicUrl = config.publicUrl ?? '';
  const links = new ResultLinks({
    publicUrl: () => publicUrl,
    secret,
    ttlSeconds: config.resultUrlTtlSeconds,
  });
  const dispatcher = createGuardedDispatcher({ allowPrivateNetworks: config.allowPrivateNetworks });
  const webhooks = new WebhookDispatcher({
    store,
    dispatcher,
    logger: logger.child({ component: 'webhooks' }),
    resultUrl: (taskId) => links.urlFor(taskId),
    timeoutMs: config.webhookTimeoutMs,
    concurrency: config.webhookConcurrency,
    perHostConcurrency: config.webhookHostConcurrency,
  });
  const pool = new WorkerPool({
    store,
    storage,
    engines: EngineRouter.all(new LocalEngine()),
    dispatcher,
    logger,
    concurrency: config.workerConcurrency,
    maxAttempts: config.maxAttempts,
    leaseMs: config.leaseMs,
    taskTimeoutMs: config.taskTimeoutMs,
    assetMaxBytes: config.assetMaxBytes,
    assetTimeoutMs: config.assetTimeoutMs,
    onStatusChange: () => webhooks.notify(),
  });
  const tasks = new TaskService({
    store,
    links,
    onCreated: () => pool.notify(),
    onDeliveryQueued: () => webhooks.notify(),
  });
  let draining = false;
  const app = buildApp({
    store,
    storage,
    tasks,
    links,
    logger,
    maxBodyBytes: config.maxBodyBytes,
    isDraining: () => draining,
  });

  await app.listen({ host: config.host, port: config.port });
  const address = app.server.address();
  if (!publicUrl && address && typeof address === 'object') {
    const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
    publicUrl = `http://${host === '0.0.0.0' || host === '[::]' ? 'localhost' : host}:${address.port}`;
  }
  pool.start();
  webhooks.start();
  logger.info({ url: publicUrl, workers: config.workerConcurrency }, 'videogen is serving');

  return {
    app,
    store,
    pool,
    webhooks,
    get publicUrl() {
      return publicUrl;
    },
    async close() {
      draining = true;
      await Promise.all([app.close(), pool.stop(config.shutdownGraceMs)]);
      // After the pool, so that callbacks of tasks that finished during the grace period still get a try;
      // whatever is pending stays queued for the next start.
      await webhooks.stop(Math.min(config.shutdownGraceMs, 5000));
      await dispatcher.close();
      await store.close();
    },
  };
}
