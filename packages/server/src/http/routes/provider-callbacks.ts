/**
 * `POST /v1/provider-callbacks/{engine}`: where the providers of engines with `callbacks: true` call back when a
 * job changes (docs/engines/README.md#provider-callbacks). No API key: a delivery proves itself with its provider's
 * signature (Replicate, fal), or is only a hint (Ark, which signs nothing); the use case checks either, and a
 * delivery only ever makes the job's next poll happen now.
 *
 * The body is read as bytes, as it came (the signatures cover them), whatever its declared type, and at most
 * 1 MiB (a prediction's logs are the largest part of any delivery). Deliveries from one client address are
 * counted per minute before the body is read; past the limit they are refused `429` with `Retry-After`, which
 * every provider retries.
 */
import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { addressSubject } from '../../accounts/dashboard-sessions.js';
import { ApiError } from '../../domain/errors.js';
import { FixedWindows } from '../../domain/fixed-windows.js';
import type { ProviderCallbacks } from '../../tasks/provider-callbacks.js';
import { ERROR_STATUSES } from '../error-statuses.js';
import { errorResponses } from '../schemas.js';

/** The largest delivery taken. */
export const MAX_CALLBACK_BYTES = 1024 * 1024;
/** Deliveries taken per client address a minute, in this process. */
export const CALLBACKS_PER_MINUTE = 1200;
const WINDOW_MS = 60_000;
/** Addresses counted at once; past this the oldest window is forgotten (fixed-windows.ts). */
const TRACKED_ADDRESSES = 10_000;

export function providerCallbackRoutes(
  app: FastifyInstance,
  deps: {
    callbacks: ProviderCallbacks;
    /** Deliveries a minute per client address; `CALLBACKS_PER_MINUTE` when absent. */
    perMinute?: number;
    now?: () => number;
  },
): void {
  const perMinute = deps.perMinute ?? CALLBACKS_PER_MINUTE;
  const windows = new FixedWindows({
    windowMs: WINDOW_MS,
    maxSubjects: TRACKED_ADDRESSES,
    ...(deps.now && { now: deps.now }),
  });
  // In a scope of its own: the body parsers here hand the route the raw bytes, and change no other route's.
  app.register(async (scope) => {
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser(
      '*',
      { parseAs: 'buffer', bodyLimit: MAX_CALLBACK_BYTES },
      (_request, body, done) => done(null, body),
    );
    scope.post<{ Params: { engine: string } }>(
      '/v1/provider-callbacks/:engine',
      {
        bodyLimit: MAX_CALLBACK_BYTES,
        schema: {
          summary: "Take a provider's callback",
          description:
            'Where the providers of engines with `callbacks: true` (ark, replicate, fal) call back when a job ' +
            'changes; not for clients. No API key: a Replicate delivery is checked against its Standard Webhooks ' +
            'signature (`webhook-id`, `webhook-timestamp`, `webhook-signature`), a fal delivery against its ED25519 ' +
            "signature (`X-Fal-Webhook-*`) and fal's published keys, and either is refused `401` when it does not " +
            'verify or is dated more than 5 minutes from now; an Ark delivery (Ark signs nothing) is read for its ' +
            "task's `id` alone. A delivery that verifies only makes the named job's next poll happen now: its " +
            'contents are never believed, and one naming no running job changes nothing. Bodies up to 1 MiB; ' +
            `${CALLBACKS_PER_MINUTE} deliveries a minute per client address.`,
          operationId: 'takeProviderCallback',
          // Whatever type the provider names: the signature covers the raw bytes.
          consumes: ['*/*'],
          tags: ['Provider callbacks'],
          params: Type.Object({
            engine: Type.String({
              description: 'The engine, by its name in the engines file.',
              examples: ['seedance'],
            }),
          }),
          body: Type.Object(
            {},
            {
              additionalProperties: true,
              description:
                "The provider's own delivery, as it sends it: Ark's task object, Replicate's prediction, fal's " +
                '`{request_id, status, payload}`.',
            },
          ),
          response: {
            204: Type.Null({ description: 'Taken (whether or not it named a running job).' }),
            ...errorResponses(
              'invalid_json',
              'invalid_callback_signature',
              'not_found',
              'payload_too_large',
              'rate_limited',
              'internal_error',
              'overloaded',
              'upstream_unavailable',
            ),
          },
        },
        // The body is bytes; the use case reads it.
        validatorCompiler: () => () => true,
        onRequest: (request, _reply, done) => {
          const { count, remainingMs } = windows.hit(addressSubject(request.ip));
          if (count > perMinute) {
            const retryAfter = Math.ceil(remainingMs / 1000);
            done(
              new ApiError(
                'rate_limited',
                `More than ${perMinute} provider callbacks from this address in a minute; retry after ${retryAfter} s.`,
                { retryAfterSeconds: retryAfter },
              ),
            );
            return;
          }
          done();
        },
      },
      async (request, reply) => {
        const { engine } = request.params;
        const body = Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0);
        try {
          const taken = await deps.callbacks.receive(engine, { headers: request.headers, body });
          request.log.info(
            { engine, upstream_id: taken.upstreamId, task_id: taken.taskId },
            taken.taskId
              ? 'provider callback: polling the task now'
              : 'provider callback for no running task',
          );
        } catch (error) {
          if (error instanceof ApiError && ERROR_STATUSES[error.code].status < 500) {
            request.log.info(
              { engine, code: error.code, reason: error.message },
              'provider callback refused',
            );
          }
          throw error;
        }
        return reply.code(204).send();
      },
    );
  });
}
