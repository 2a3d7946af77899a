/**
 * The composition root: wires config, adapters, the task service, the worker pool, callbacks and the HTTP
 * app for the process's role. `api` serves the API and sends callbacks; `worker` renders and serves only
 * health checks; `all` (one machine) does both.
 */
import { randomBytes } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import { AccountSettings } from './accounts/account-settings.js';
import { ApiKeyAuthentication } from './accounts/api-key-authentication.js';
import { DashboardSessions, DEFAULT_SIGN_IN_LIMITS } from './accounts/dashboard-sessions.js';
import {
  loadEnginesConfig,
  openEngines,
  openResultUrls,
  openStorage,
  openStore,
  openWorkSignal,
} from './adapters.js';
import type { Config } from './config.js';
import {
  callbackEngines,
  checkProviderCallbacks,
  createCallbackVerifiers,
} from './engines/callbacks/provider-callbacks.js';
import { EngineRouter } from './engines/engine-router.js';
import { routeCapabilities, routedInputCheck } from './engines/routed-inputs.js';
import { FileService } from './files/file-service.js';
import { type ApiDependencies, buildApp } from './http/app.js';
import { Metrics } from './metrics.js';
import { ModelList } from './models/model-list.js';
import { createGuardedDispatcher } from './outbound/guarded-dispatcher.js';
import { createOutboundAgent } from './outbound/outbound-agent.js';
import type { Engine } from './ports/engine.js';
import type { Storage } from './ports/storage.js';
import type { Store } from './ports/store.js';
import { securePrivateFiles } from './process/private-files.js';
import { ScratchSpace } from './process/scratch-space.js';
import { SpaceAlarm } from './process/space-alarm.js';
import { JobWakeups } from './runner/job-wakeups.js';
import { WorkerPool } from './runner/worker-pool.js';
import { ProviderCallbacks } from './tasks/provider-callbacks.js';
import { ResultLinks } from './tasks/result-links.js';
import { RetentionSweeper } from './tasks/retention.js';
import { RunTimeEstimates } from './tasks/run-time-estimates.js';
import { TaskService } from './tasks/task-service.js';
import { UsageService } from './usage/usage-service.js';
import { WebhookDispatcher } from './webhooks/webhook-dispatcher.js';

export interface Service {
  readonly app: FastifyInstance;
  readonly store: Store;
  /** Absent in an `api` process or with no worker slots. */
  readonly pool: WorkerPool | undefined;
  /** Absent in a `worker` process. */
  readonly webhooks: WebhookDispatcher | undefined;
  /** The base URL clients reach this server at. */
  readonly publicUrl: string;
  /** Stops accepting requests and claiming tasks, finishes or releases running tasks, closes the store. */
  close(): Promise<void>;
}

export interface ServiceOptions {
  /** The store's clock (epoch ms), for tests; `Date.now` when absent. */
  readonly now?: () => number;
  /** Every model to this engine instead of those of the engines file (bench/queue-comparison/queues.ts: an instant engine). */
  readonly engine?: Engine;
  /** The store and the storage as the service uses them, for tests that inject their failures (a full disk). */
  readonly wrapStore?: (store: Store) => Store;
  readonly wrapStorage?: (storage: Storage) => Storage;
  /** How often event streams read their tasks when no change is signalled (tests: that the signal alone suffices). */
  readonly watchFallbackMs?: number;
  /** How long the models' run times are kept (tasks/run-time-estimates.ts; tests: 0, read whenever asked). */
  readonly runTimeTtlMs?: number;
}

export async function startService(
  config: Config,
  logger: Logger,
  options: ServiceOptions = {},
): Promise<Service> {
  const servesApi = config.role !== 'worker';
  const runsWorkers = config.role !== 'api' && config.workerConcurrency > 0;
  // Before anything is opened: a mistake in the engines file stops the start with its own message. API
  // processes read it too, to refuse at creation what the routed engine cannot take.
  const enginesConfig = loadEnginesConfig(config);
  checkProviderCallbacks(enginesConfig, config.publicUrl);
  // API processes take the providers' callbacks: each engine's verifier, built now so a bad option stops the start;
  // they fetch their providers' keys (Replicate's secret, fal's JWKS) through an agent of their own.
  const keysDispatcher =
    servesApi && callbackEngines(enginesConfig).length > 0 ? createOutboundAgent() : undefined;
  const callbackVerifiers = keysDispatcher
    ? createCallbackVerifiers(enginesConfig, { dispatcher: keysDispatcher })
    : new Map();
  const engines = runsWorkers
    ? options.engine
      ? {
          config: enginesConfig,
          engines: new Map([[options.engine.name, options.engine]]),
          router: EngineRouter.all(options.engine),
          close: async () => {},
        }
      : openEngines(enginesConfig, config.publicUrl)
    : undefined;
  const onStoreError = (error: unknown) =>
    logger.warn({ err: error }, 'store connection error; reconnecting');
  await securePrivateFiles(config, (message) => logger.warn(message));
  const scratch = await ScratchSpace.open({
    onRemoved: (path) => logger.info({ path }, 'removed the temporary files of a process that is gone'),
  });
  const opened = await openStore(config.databaseUrl, {
    schema: config.databaseSchema,
    onError: onStoreError,
    checkpointInBackground: true,
    ...(options.now ? { now: options.now } : {}),
  });
  const store = options.wrapStore?.(opened) ?? opened;
  await store.migrate();
  // Wakes claimers here and, on PostgreSQL, in every other process: a task created by an API process starts
  // at once on a worker machine, and a status change there wakes the API processes' callback dispatchers.
  const signal = openWorkSignal(store, { onError: onStoreError });
  const openedStorage = await openStorage(config.storageUrl);
  const storage = options.wrapStorage?.(openedStorage) ?? openedStorage;
  const dispatcher = createGuardedDispatcher({ allowPrivateNetworks: config.allowPrivateNetworks });
  /** Where no request is answered (callbacks): the configured public URL, else the listener's address. */
  let publicUrl = config.publicUrl ?? '';
  /**
   * The base of the URLs in the answer to a request sent to `requestOrigin`: without a configured public URL,
   * that origin, so that a client (the dashboard's page above all) gets them at the address it reached.
   */
  const answerBase = (requestOrigin?: string) => config.publicUrl ?? requestOrigin ?? publicUrl;
  const metrics = new Metrics({
    queueStats: () => store.queueStats(),
    prices: enginesConfig.prices,
    engines: {
      stats: () => store.engineStats(),
      names: [...enginesConfig.engines.keys()],
      circuit: enginesConfig.routing.circuit,
    },
  });

  let webhooks: WebhookDispatcher | undefined;
  let api: ApiDependencies | undefined;
  if (servesApi) {
    const secret = await store.getOrCreateSecret('result_links', () => randomBytes(32).toString('base64url'));
    const links = new ResultLinks({
      publicUrl: answerBase,
      secret,
      ttlSeconds: config.resultUrlTtlSeconds,
    });
    const resultUrl = openResultUrls(config, storage, links);
    const runTimes = new RunTimeEstimates({
      store,
      ...(options.now ? { now: options.now } : {}),
      ...(options.runTimeTtlMs !== undefined && { ttlMs: options.runTimeTtlMs }),
      onError: (error) => logger.warn({ err: error }, "reading the models' recent run times failed"),
    });
    webhooks = new WebhookDispatcher({
      store,
      dispatcher,
      logger: logger.child({ component: 'webhooks' }),
      resultUrl,
      currency: enginesConfig.prices?.currency,
      runTimes,
      timeoutMs: config.webhookTimeoutMs,
      concurrency: config.webhookConcurrency,
      perHostConcurrency: config.webhookHostConcurrency,
      metrics,
    });
    const files = new FileService({
      store,
      storage,
      maxBytes: config.assetMaxBytes,
      publicUrl: answerBase,
      tempDir: scratch.path,
    });
    const tasks = new TaskService({
      store,
      resultUrl,
      assets: { storage, maxBytes: config.assetMaxBytes, tempDir: scratch.path },
      resolveUploads: (scope, params, requestOrigin) => files.resolveUploads(scope, params, requestOrigin),
      showUploads: (params, requestOrigin) => files.showUploads(params, requestOrigin),
      maxQueuedTasks: config.maxQueuedTasks,
      onCreated: (task) => {
        metrics.tasksCreated.inc({ model: task.model });
        void signal.notify('tasks');
      },
      onDeliveryQueued: () => void signal.notify('deliveries'),
      onCancelled: () => void signal.notify('cancellations'),
      checkInputs: routedInputCheck(enginesConfig),
      prices: enginesConfig.prices,
      catalogue: enginesConfig.catalogue,
      runTimes,
      // Event streams read their tasks again when a worker (here or, on PostgreSQL, anywhere) changed one, or a
      // task was cancelled.
      watch: {
        subscribe: (listener) => {
          const stops = [signal.subscribe('changes', listener), signal.subscribe('cancellations', listener)];
          return () => {
            for (const stop of stops) stop();
          };
        },
        onError: (error) => logger.warn({ err: error }, 'reading the tasks of event streams failed'),
        ...(options.watchFallbackMs !== undefined && { fallbackMs: options.watchFallbackMs }),
      },
    });
    const usage = new UsageService({ store, prices: enginesConfig.prices });
    const dashboard = {
      sessions: new DashboardSessions(store, {
        limits: { ...DEFAULT_SIGN_IN_LIMITS, attemptsPerAddress: config.signInAttemptsPerMinute },
      }),
      settings: new AccountSettings(store),
      secureCookies: publicUrl.startsWith('https:'),
      mediaSources: resultMediaSources(config.storageUrl),
    };
    const models = new ModelList({
      catalogue: enginesConfig.catalogue,
      routing: {
        routes: enginesConfig.models,
        circuit: enginesConfig.routing.circuit,
        capabilities: (route) => routeCapabilities(enginesConfig, route),
      },
      store,
    });
    // A verified callback wakes the job's poll here or, on PostgreSQL, in whichever worker process follows it.
    const providerCallbacks = new ProviderCallbacks({
      store,
      verifiers: callbackVerifiers,
      wake: (taskId) => void signal.notify('polls', taskId),
    });
    api = {
      keys: new ApiKeyAuthentication(store),
      tasks,
      links,
      storage,
      files,
      usage,
      dashboard,
      models,
      publicUrl: answerBase,
      providerCallbacks,
      retentionSeconds: config.retentionDays * 86_400,
    };
  }

  // Raised by requests and renders whose writes failed for lack of space: `/readyz` answers 503 meanwhile.
  const space = new SpaceAlarm();
  // A provider's callback, taken by an API process here or elsewhere, ends the pause of the run following its job.
  const wakeups = engines ? new JobWakeups() : undefined;
  const pool = engines
    ? new WorkerPool({
        store,
        storage,
        engines: engines.router,
        catalogue: enginesConfig.catalogue,
        dispatcher,
        logger,
        concurrency: config.workerConcurrency,
        maxAttempts: config.maxAttempts,
        maxActivePerAccount: config.maxActiveTasksPerAccount,
        leaseMs: config.leaseMs,
        taskTimeoutMs: config.taskTimeoutMs,
        assetMaxBytes: config.assetMaxBytes,
        assetTimeoutMs: config.assetTimeoutMs,
        scratchDir: scratch.path,
        // Only a task with a callback URL had a delivery queued with its change: waking the dispatchers for the
        // others would send each of them to the store for nothing, on SQLite ahead of the next claim.
        onStatusChange: (task) => {
          if (!task || task.params.callback_url) void signal.notify('deliveries');
          void signal.notify('changes');
        },
        onProgress: () => void signal.notify('changes'),
        metrics,
        onNoSpace: () => space.raise(),
        ...(wakeups && { wakeups }),
      })
    : undefined;

  let draining = false;
  const app = buildApp({
    storeAnswers: () => store.ping(),
    metrics,
    logger,
    maxBodyBytes: config.maxBodyBytes,
    maxOtherBodyBytes: config.maxOtherBodyBytes,
    bodiesInFlight: config.bodiesInFlight,
    timeouts: config.httpTimeouts,
    rateLimit: { perMinute: config.rateLimitPerMinute, windowMs: config.rateLimitWindowMs },
    eventStreams: config.eventStreams,
    isDraining: () => draining,
    space,
    ...(api ? { api } : {}),
  });
  try {
    await app.listen({ host: config.host, port: config.port });
  } catch (error) {
    // A port that is taken: close what is open (the store's file, the signal's connections), so that the
    // process exits with the error rather than live on holding them.
    await app.close().catch(() => undefined);
    await signal.close();
    await dispatcher.close();
    await keysDispatcher?.close();
    await engines?.close();
    await store.close();
    await scratch.close();
    throw error;
  }
  const address = app.server.address();
  if (!publicUrl && address && typeof address === 'object') {
    const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
    publicUrl = `http://${host === '0.0.0.0' || host === '[::]' ? 'localhost' : host}:${address.port}`;
  }
  const unsubscribe = [
    pool && signal.subscribe('tasks', () => pool.notify()),
    pool && signal.subscribe('cancellations', () => void pool.checkCancellations()),
    webhooks && signal.subscribe('deliveries', () => webhooks?.notify()),
    wakeups &&
      signal.subscribe('polls', (taskId) => {
        if (taskId !== undefined) wakeups.wake(taskId);
      }),
  ];
  pool?.start();
  webhooks?.start();
  const retention =
    servesApi && config.retentionDays > 0
      ? new RetentionSweeper({
          store,
          storage,
          logger: logger.child({ component: 'retention' }),
          retentionDays: config.retentionDays,
        })
      : undefined;
  retention?.start();
  logger.info(
    {
      url: publicUrl,
      role: config.role,
      workers: pool ? config.workerConcurrency : 0,
      ...(engines ? { engines: Object.fromEntries(engines.config.models) } : {}),
    },
    'videogen is serving',
  );

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
      await Promise.all([app.close(), pool?.stop(config.shutdownGraceMs), retention?.stop()]);
      // After the pool, so that callbacks of tasks that finished during the grace period still get a try;
      // whatever is pending stays queued for the next start.
      await webhooks?.stop(Math.min(config.shutdownGraceMs, 5000));
      for (const stop of unsubscribe) stop?.();
      await signal.close();
      await dispatcher.close();
      await keysDispatcher?.close();
      await engines?.close();
      await store.close();
      await scratch.close();
    },
  };
}

/**
 * Where the dashboard's page may play result videos from besides this server: S3 storage hands out presigned
 * bucket URLs (the endpoint's origin when one is set in the environment, any https origin otherwise).
 */
function resultMediaSources(storageUrl: string): string[] {
  if (!storageUrl.startsWith('s3:')) return [];
  const endpoint = process.env.AWS_ENDPOINT_URL_S3 ?? process.env.AWS_ENDPOINT_URL;
  return endpoint ? [new URL(endpoint).origin, 'https:'] : ['https:'];
}
