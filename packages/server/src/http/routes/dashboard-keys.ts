/** The dashboard's key management: list, create (shown once), revoke and rotate with a grace period. */
import { type Static, Type } from '@sinclair/typebox';
import type { FastifyInstance, FastifyRequest, preValidationAsyncHookHandler } from 'fastify';
import type { AccountSettings } from '../../accounts/account-settings.js';
import { toPublicApiKey } from '../../accounts/api-keys.js';
import { ApiError, type ApiErrorCode } from '../../domain/errors.js';
import { ENVIRONMENTS, type Environment } from '../../domain/task.js';
import { NO_LIMITS } from '../../domain/usage.js';
import { fromPublicLimits, type PublicLimits, toPublicLimits } from '../../usage/usage-limits.js';
import { signedInSession } from '../authentication.js';
import {
  BODY_ERRORS,
  DASHBOARD_SECURITY,
  errorResponses,
  FIELD_ERRORS,
  LIMIT_ERRORS,
  WRITE_ERRORS,
} from '../schemas.js';
import { LimitsChangeSchema, LimitsSchema, limitsChange } from './dashboard-limits.js';

/** The longest grace period a rotation may give the old key: 30 days. */
export const MAX_GRACE_PERIOD_HOURS = 720;

const ApiKeySchema = Type.Object(
  {
    id: Type.String(),
    name: Type.String(),
    environment: Type.Union(ENVIRONMENTS.map((env) => Type.Literal(env))),
    prefix: Type.String({ description: 'The first characters of the key.' }),
    created_at: Type.Integer({ description: 'Unix seconds.' }),
    last_used_at: Type.Union([Type.Integer(), Type.Null()], { description: 'Unix seconds, to the minute.' }),
    expires_at: Type.Union([Type.Integer(), Type.Null()], {
      description: 'Unix seconds: the end of a rotated key’s grace period.',
    }),
    ...LimitsSchema.properties,
  },
  { description: 'An API key, without the key itself.' },
);

const NewKeySchema = Type.Object({
  key: Type.String({ description: 'The key itself: in this answer only.' }),
  api_key: ApiKeySchema,
});

const KeyIdParams = Type.Object({ key_id: Type.String() });
const READ_ERRORS = ['not_signed_in', 'internal_error'] as const;
const CHANGE_ERRORS: readonly ApiErrorCode[] = [...READ_ERRORS, 'invalid_csrf_token', ...WRITE_ERRORS];

function keyNotFound(): ApiError {
  return new ApiError('api_key_not_found', 'This account has no such active API key.', { param: 'key_id' });
}

export function dashboardKeyRoutes(
  app: FastifyInstance,
  deps: {
    settings: AccountSettings;
    requireSession: preValidationAsyncHookHandler;
  },
) {
  const accountOf = (request: FastifyRequest) => signedInSession(request).accountId;

  app.get(
    '/dashboard/api/keys',
    {
      preValidation: deps.requireSession,
      schema: {
        summary: "The account's API keys",
        description: 'The keys that work now (not revoked, not past a grace period), newest first.',
        operationId: 'listApiKeys',
        tags: ['Dashboard'],
        security: DASHBOARD_SECURITY,
        response: { 200: Type.Object({ data: Type.Array(ApiKeySchema) }), ...errorResponses(...READ_ERRORS) },
      },
    },
    async (request) => ({
      data: (await deps.settings.activeKeys(accountOf(request))).map(toPublicApiKey),
    }),
  );

  const CreateKeySchema = Type.Object(
    {
      name: Type.String({ minLength: 1, maxLength: 100 }),
      environment: Type.Union(ENVIRONMENTS.map((env) => Type.Literal(env))),
      ...LimitsChangeSchema.properties,
    },
    { additionalProperties: false },
  );
  app.post<{ Body: { name: string; environment: Environment } & Partial<PublicLimits> }>(
    '/dashboard/api/keys',
    {
      preValidation: deps.requireSession,
      schema: {
        summary: 'Create an API key',
        operationId: 'createApiKey',
        tags: ['Dashboard'],
        security: DASHBOARD_SECURITY,
        body: CreateKeySchema,
        response: {
          201: NewKeySchema,
          ...errorResponses(...FIELD_ERRORS, ...CHANGE_ERRORS, ...BODY_ERRORS),
        },
      },
    },
    async (request, reply) => {
      const accountId = accountOf(request);
      const name = request.body.name.trim();
      if (!name) throw new ApiError('invalid_parameter', 'name must not be blank.', { param: 'name' });
      const limits = await limitsChange(() =>
        fromPublicLimits({ ...toPublicLimits(NO_LIMITS), ...changesIn(request.body) }),
      );
      const created = await deps.settings.createKey(accountId, {
        name,
        environment: request.body.environment,
        limits,
      });
      return reply.code(201).send({ key: created.key, api_key: toPublicApiKey(created.record) });
    },
  );

  app.post<{ Params: Static<typeof KeyIdParams> }>(
    '/dashboard/api/keys/:key_id/revoke',
    {
      preValidation: deps.requireSession,
      schema: {
        summary: 'Revoke an API key',
        description: 'The key stops working at once.',
        operationId: 'revokeApiKey',
        tags: ['Dashboard'],
        security: DASHBOARD_SECURITY,
        params: KeyIdParams,
        response: {
          200: Type.Object({ api_key: ApiKeySchema }),
          ...errorResponses('api_key_not_found', ...CHANGE_ERRORS),
        },
      },
    },
    async (request) => {
      const accountId = accountOf(request);
      const { key_id: keyId } = request.params;
      const key = await deps.settings.revokeKey(accountId, keyId);
      if (!key) throw keyNotFound();
      return { api_key: toPublicApiKey(key) };
    },
  );

  app.post<{ Params: Static<typeof KeyIdParams>; Body: { grace_period_hours: number } }>(
    '/dashboard/api/keys/:key_id/rotate',
    {
      preValidation: deps.requireSession,
      schema: {
        summary: 'Rotate an API key',
        description:
          'Creates a new key of the same name and environment; the old one keeps working for ' +
          '`grace_period_hours` (at most 720) and is revoked at once when it is 0.',
        operationId: 'rotateApiKey',
        tags: ['Dashboard'],
        security: DASHBOARD_SECURITY,
        params: KeyIdParams,
        body: Type.Object(
          { grace_period_hours: Type.Integer({ minimum: 0, maximum: MAX_GRACE_PERIOD_HOURS }) },
          { additionalProperties: false },
        ),
        response: {
          201: Type.Object({ key: Type.String(), api_key: ApiKeySchema, previous: ApiKeySchema }),
          ...errorResponses(...FIELD_ERRORS, 'api_key_not_found', ...CHANGE_ERRORS, ...BODY_ERRORS),
        },
      },
    },
    async (request, reply) => {
      const accountId = accountOf(request);
      const graceMs = request.body.grace_period_hours * 60 * 60 * 1000;
      const rotated = await deps.settings.rotateKey(accountId, request.params.key_id, graceMs);
      if (!rotated) throw keyNotFound();
      return reply.code(201).send({
        key: rotated.key,
        api_key: toPublicApiKey(rotated.record),
        previous: toPublicApiKey(rotated.previous),
      });
    },
  );

  app.post<{ Params: Static<typeof KeyIdParams>; Body: Partial<PublicLimits> }>(
    '/dashboard/api/keys/:key_id/limits',
    {
      preValidation: deps.requireSession,
      schema: {
        summary: "Set an API key's monthly limits",
        description:
          'Changes the limits named (null: no limit) and keeps the others. `monthly_budget` is in the currency of the configured prices.',
        operationId: 'setApiKeyLimits',
        tags: ['Dashboard'],
        security: DASHBOARD_SECURITY,
        params: KeyIdParams,
        body: LimitsChangeSchema,
        response: {
          200: Type.Object({ api_key: ApiKeySchema }),
          ...errorResponses(...LIMIT_ERRORS, 'api_key_not_found', ...CHANGE_ERRORS, ...BODY_ERRORS),
        },
      },
    },
    async (request) => {
      const accountId = accountOf(request);
      const changes = changesIn(request.body);
      const key = await limitsChange(() =>
        deps.settings.setKeyLimits(accountId, request.params.key_id, changes),
      );
      if (!key) throw keyNotFound();
      return { api_key: toPublicApiKey(key) };
    },
  );
}

/** The limit fields a body names (absent ones stay as they are). */
function changesIn(body: Partial<PublicLimits>): Partial<PublicLimits> {
  return Object.fromEntries(
    (['monthly_video_seconds', 'monthly_budget'] as const)
      .filter((field) => body[field] !== undefined)
      .map((field) => [field, body[field]]),
  );
}
