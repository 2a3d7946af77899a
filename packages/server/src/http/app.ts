/**
 * The Fastify application: request ids, one log line per request, errors, authentication and the routes.
 * An API process serves everything; a worker process only its health checks.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import fastifyCookie from '@fastify/cookie';
import Fastify, {
  type FastifyInstance,
  type FastifyReply,
  type FastifyRequest,
  LogController,
} from 'fastify';
import type { Logger } from 'pino';
import type { AccountSettings } from '../accounts/account-settings.js';
import type { ApiKeyAuthentication } from '../accounts/api-key-authentication.js';
import type { DashboardSessions } from '../accounts/dashboard-sessions.js';
import type { EventStreamLimits, HttpTimeouts } from '../config.js';
import { ApiError } from '../domain/errors.js';
import { pooledRandomBytes } from '../domain/random-pool.js';
import type { FileService } from '../files/file-service.js';
import type { Metrics } from '../metrics.js';
import type { ModelList } from '../models/model-list.js';
import type { Storage } from '../ports/storage.js';
import type { ProviderCallbacks } from '../tasks/provider-callbacks.js';
import type { ResultLinks } from '../tasks/result-links.js';
import type { TaskService } from '../tasks/task-service.js';
import type { UsageService } from '../usage/usage-service.js';
import { createAuthenticator, createSessionGuard } from './authentication.js';
import { BodiesInFlight, type BodyBounds } from './bodies-in-flight.js';
import { registerBodyParsers } from './body-parsers.js';
import { endConnectionsOnClose } from './connections-on-close.js';
import {
  createClientErrorHandler,
  createErrorHandler,
  frameworkErrorHandler,
  notFoundHandler,
  sendConnectionError,
  sendError,
} from './error-handler.js';
import { lingerBeforeClosing } from './lingering-close.js';
import { openApiRoutes, registerOpenApi } from './openapi.js';
import { type RateLimitSettings, withRateLimit } from './rate-limit.js';
import { apiReferenceRoutes } from './routes/api-reference.js';
import { dashboardKeyRoutes } from './routes/dashboard-keys.js';
import { dashboardPageRoutes } from './routes/dashboard-pages.js';
import { dashboardSessionRoutes } from './routes/dashboard-session.js';
import { dashboardTaskRoutes } from './routes/dashboard-tasks.js';
import { dashboardUsageRoutes } from './routes/dashboard-usage.js';
import { dashboardWebhookRoutes } from './routes/dashboard-webhooks.js';
import { deliveryRoutes } from './routes/deliveries.js';
import { faviconRoutes } from './routes/favicon.js';
import { fileRoutes } from './routes/files.js';
import { generationRoutes } from './routes/generations.js';
import { healthRoutes } from './routes/health.js';
import { metricsRoutes } from './routes/metrics.js';
import { modelRoutes } from './routes/models.js';
import { openAiVideoRoutes } from './routes/openai-videos.js';
import { providerCallbackRoutes } from './routes/provider-callbacks.js';
import { resultRoutes } from './routes/results.js';
import { taskEventRoutes } from './routes/task-events.js';
import { taskRoutes } from './routes/tasks.js';
import { usageRoutes } from './routes/usage.js';
import { strictValidatorCompiler } from './strict-validation.js';

export interface ApiDependencies {
  /** Which API key a request's Bearer secret is. */
  readonly keys: ApiKeyAuthentication;
  readonly tasks: TaskService;
  readonly links: ResultLinks;
  readonly storage: Storage;
  /** Uploads (`/v1/files`). */
  readonly files?: FileService;
  /** `GET /v1/usage`, and the dashboard's usage and limits. */
  readonly usage?: UsageService;
  /** `GET /v1/models`. */
  readonly models?: ModelList;
  /** The account dashboard (`/dashboard`); its session cookie also opens the `/v1` routes. */
  readonly dashboard?: DashboardDependencies;
  /** The base of the URLs in the answer to a request sent to `requestOrigin` (the document's `servers`). */
  readonly publicUrl: (requestOrigin?: string) => string;
  /** `POST /v1/provider-callbacks/{engine}`. */
  readonly providerCallbacks?: ProviderCallbacks;
  /** How long a completed task's video is kept (`VIDEOGEN_RETENTION_DAYS`; 0: for ever), for the OpenAI Videos API. */
  readonly retentionSeconds?: number;
}

export interface DashboardDependencies {
  readonly sessions: DashboardSessions;
  /** The signed-in account's keys, limits and webhook secret. */
  readonly settings: AccountSettings;
  /** Mark the session cookie Secure even when the request reached us over http (TLS ended at a proxy). */
  readonly secureCookies: boolean;
  /** Origins result videos are played from besides this server, for the page's content security policy. */
  readonly mediaSources: readonly string[];
}

export interface AppDependencies {
  /** Readiness: resolves when the store answers. */
  readonly storeAnswers: () => Promise<void>;
  readonly metrics: Metrics;
  readonly logger: Logger;
  /** Largest body of task creation (inline `data:` assets count). */
  readonly maxBodyBytes: number;
  /** Largest body of every other route; 64 KiB when absent. */
  readonly maxOtherBodyBytes?: number;
  /**
   * Bodies larger than `maxOtherBodyBytes` held at once, and their bytes; beyond, `503 overloaded` before the
   * body is read (bodies-in-flight.ts). No bound when absent.
   */
  readonly bodiesInFlight?: BodyBounds;
  /** How long to wait on clients; Node's and Fastify's defaults when absent. */
  readonly timeouts?: HttpTimeouts;
  /** The per-key request rate limit; off when absent. */
  readonly rateLimit?: RateLimitSettings;
  /** Caps and lifetime of task event streams; no caps and 10 minutes when absent. */
  readonly eventStreams?: EventStreamLimits;
  readonly isDraining: () => boolean;
  /** Raised when a write failed for lack of space; `/readyz` answers 503 while it is (process/space-alarm.ts). */
  readonly space?: { raise(): void; readonly raised: boolean };
  /** The public API; a worker process leaves it out and serves only its health checks. */
  readonly api?: ApiDependencies;
}

declare module 'fastify' {
  interface FastifyRequest {
    /** The route's pattern (`/v1/tasks/:task_id`), `unmatched` for a path no route has. */
    routeUrl: string | null;
  }
}

/** Routes still served while the server drains: load balancers read readiness there. */
const SERVED_WHILE_DRAINING = new Set(['/healthz', '/readyz', '/metrics']);

/** A body refused for the bound waits this long: the bodies held are being read or answered. */
const BODY_RETRY_SECONDS = 1;

const newRequestId = () => `req_${pooledRandomBytes(12).toString('base64url')}`;

export function buildApp(deps: AppDependencies): FastifyInstance {
  const { timeouts } = deps;
  // The latest request on each connection: a client error in its body is answered under its id, and not at all
  // once its answer has begun; one after it is a new request's, answered after it.
  const requests = new WeakMap<Socket, { id: string; request: IncomingMessage; response: ServerResponse }>();
  const app = Fastify({
    loggerInstance: deps.logger,
    // Fastify's own two lines per request are off: the onResponse hook below writes one.
    logController: new LogController({ disableRequestLogging: true, requestIdLogLabel: 'request_id' }),
    // Small for every route; task creation raises it to `maxBodyBytes` for itself.
    bodyLimit: deps.maxOtherBodyBytes ?? 64 * 1024,
    genReqId: newRequestId,
    // No path parameter is refused for its length (Fastify's default answers 414 past 100 characters): the
    // route answers, 404 for an id that does not exist. Node's header limit bounds the request line anyway.
    routerOptions: { maxParamLength: 64 * 1024 },
    frameworkErrors: frameworkErrorHandler,
    clientErrorHandler: createClientErrorHandler({
      log: deps.logger,
      newRequestId,
      latest: (socket) => requests.get(socket),
    }),
    // The drain hook below answers instead, in the error shape; Fastify's own 503 has a body of its own.
    return503OnClosing: false,
    // Node answers an HTTP/1.1 request without a Host header itself, with an empty 400 and no request id; the
    // hook below answers it in the error shape instead.
    http: { requireHostHeader: false },
    ...(timeouts
      ? {
          requestTimeout: timeouts.requestMs,
          keepAliveTimeout: timeouts.keepAliveMs,
          connectionTimeout: timeouts.idleMs,
          http: {
            requireHostHeader: false,
            headersTimeout: timeouts.headersMs,
            requestTimeout: timeouts.requestMs,
            // Node checks the headers and request timeouts on this interval, 30 s by default (a 10 s timeout
            // would fire after up to 40): a tenth of the shorter keeps each within 10 % of its value.
            connectionsCheckingInterval: Math.min(
              30_000,
              Math.max(50, Math.round(Math.min(timeouts.headersMs, timeouts.requestMs || Infinity) / 10)),
            ),
          },
        }
      : {}),
  }) as unknown as FastifyInstance;
  registerBodyParsers(app, { bodyLimit: deps.maxOtherBodyBytes ?? 64 * 1024 });
  lingerBeforeClosing(app);
  const bodies =
    deps.bodiesInFlight &&
    new BodiesInFlight(deps.bodiesInFlight, deps.maxOtherBodyBytes ?? 64 * 1024, (held, bytes) => {
      deps.metrics.httpBodiesInFlight.set(held);
      deps.metrics.httpBodyBytesInFlight.set(bytes);
    });
  // No route's schema coerces a value or drops a field it does not know (the /v1 routes check their own).
  app.setValidatorCompiler(strictValidatorCompiler);
  endConnectionsOnClose(app);
  lingerBeforeClosing(app);

  // One line per request. The path is logged without its query string: result links carry signatures.
  const logRequest = (request: FastifyRequest, reply: FastifyReply, closedEarly: boolean) =>
    request.log.info(
      {
        method: request.method,
        path: request.url.split('?')[0],
        status: closedEarly && !reply.raw.headersSent ? undefined : reply.statusCode,
        ms: Math.round(reply.elapsedTime),
        key_id: request.principal?.keyId,
        ...(closedEarly ? { closed_early: true } : {}),
      },
      'request',
    );
  // The route's pattern, read once: Fastify's `request.routeOptions` builds a new object on every read.
  app.decorateRequest('routeUrl', null);
  const routeOf = (request: FastifyRequest): string =>
    (request.routeUrl ??= request.routeOptions.url ?? 'unmatched');
  // The hooks every request runs take callbacks: an async hook costs every request a promise and a tick.
  app.addHook('onRequest', (request, reply, done) => {
    reply.header('x-request-id', request.id);
    requests.set(request.raw.socket, { id: String(request.id), request: request.raw, response: reply.raw });
    const inFlight = deps.metrics.httpInFlightOf(routeOf(request));
    inFlight.inc();
    reply.raw.once('close', () => {
      inFlight.dec();
      // onResponse runs only for answers sent to their end: one the client cut off (an event stream it stopped
      // reading, an abandoned download) gets its line here.
      if (!reply.raw.writableFinished) logRequest(request, reply, true);
    });
    done();
  });
  app.addHook('onResponse', (request, reply, done) => {
    deps.metrics.observeHttpDuration(
      request.method,
      routeOf(request),
      reply.statusCode,
      reply.elapsedTime / 1000,
    );
    logRequest(request, reply, false);
    done();
  });
  // Requests refused before any route sees them, in one hook (each hook is a step of every request). Answered
  // here, they go no further: a callback hook that answers does not call `done`.
  app.addHook('onRequest', (request, reply, done) => {
    // RFC 9112 §3.2: a server must answer 400 to an HTTP/1.1 request without a Host header.
    if (request.headers.host === undefined && request.raw.httpVersion === '1.1') {
      sendConnectionError(reply, 'malformed_request', 'An HTTP/1.1 request needs a Host header.');
      return;
    }
    // Requests that reach a closing server on a connection it already had: refused like a full queue, and the
    // connection closed, so that the client retries on a fresh one, elsewhere.
    if (deps.isDraining() && !SERVED_WHILE_DRAINING.has(routeOf(request))) {
      reply.header('connection', 'close');
      sendError(
        reply,
        new ApiError('overloaded', 'The server is shutting down: send the request again.', {
          retryAfterSeconds: 1,
        }),
      );
      return;
    }
    // A path no route has is not found whatever its body: answered before the body is read, whose type or size
    // would otherwise be judged first (a 415 for a form, a 413).
    if (request.is404) {
      notFoundHandler(request, reply);
      return;
    }
    if (bodies && !bodies.admit(request, reply)) {
      sendError(
        reply,
        new ApiError(
          'overloaded',
          `The server holds as many large request bodies as it takes at once; retry after ${BODY_RETRY_SECONDS} s.`,
          { retryAfterSeconds: BODY_RETRY_SECONDS },
        ),
      );
      return;
    }
    done();
  });
  const { space } = deps;
  app.setErrorHandler(createErrorHandler(space ? { onNoSpace: () => space.raise() } : {}));
  app.setNotFoundHandler(notFoundHandler);

  const { api } = deps;
  // @fastify/swagger learns the routes from an onRoute hook, so it comes first and the routes are added in a
  // plugin registered after it (a route added directly on `app` here would be missing from /openapi.json).
  if (api) registerOpenApi(app, { servedWhileDraining: SERVED_WHILE_DRAINING });
  if (api?.dashboard) app.register(fastifyCookie);
  app.register(async (routes) => {
    healthRoutes(routes, {
      storeAnswers: deps.storeAnswers,
      isDraining: deps.isDraining,
      ...(space ? { storageFull: () => space.raised } : {}),
    });
    metricsRoutes(routes, { metrics: deps.metrics });
    if (api) {
      const authenticate = withRateLimit(
        createAuthenticator(api.keys, api.dashboard?.sessions),
        deps.rateLimit ?? { perMinute: 0, windowMs: 60_000 },
      );
      generationRoutes(routes, { tasks: api.tasks, authenticate, maxBodyBytes: deps.maxBodyBytes });
      taskRoutes(routes, { tasks: api.tasks, authenticate });
      taskEventRoutes(routes, {
        tasks: api.tasks,
        authenticate,
        limits: deps.eventStreams ?? { perKey: 0, perProcess: 0, lifetimeMs: 600_000 },
        metrics: deps.metrics,
      });
      deliveryRoutes(routes, { tasks: api.tasks, authenticate });
      openAiVideoRoutes(routes, {
        tasks: api.tasks,
        storage: api.storage,
        authenticate,
        maxBodyBytes: deps.maxBodyBytes,
        publicUrl: api.publicUrl,
        retentionSeconds: api.retentionSeconds ?? 0,
      });
      if (api.files) fileRoutes(routes, { files: api.files, authenticate });
      if (api.usage) usageRoutes(routes, { usage: api.usage, authenticate });
      if (api.models) modelRoutes(routes, { models: api.models, authenticate });
      resultRoutes(routes, { links: api.links, storage: api.storage });
      if (api.providerCallbacks) providerCallbackRoutes(routes, { callbacks: api.providerCallbacks });
      const { dashboard } = api;
      if (dashboard) {
        const { sessions, secureCookies, settings } = dashboard;
        const requireSession = createSessionGuard(sessions);
        dashboardSessionRoutes(routes, { sessions, requireSession, secureCookies });
        dashboardKeyRoutes(routes, { settings, requireSession });
        if (api.usage) dashboardUsageRoutes(routes, { settings, usage: api.usage, requireSession });
        dashboardWebhookRoutes(routes, { settings, requireSession });
        dashboardTaskRoutes(routes, { tasks: api.tasks, requireSession });
        dashboardPageRoutes(routes, { mediaSources: dashboard.mediaSources });
      }
      openApiRoutes(routes, { publicUrl: api.publicUrl });
      apiReferenceRoutes(routes);
      faviconRoutes(routes);
    }
  });
  return app;
}
