/** The dashboard's webhook signing secret: reveal it, rotate it. */
import { Type } from '@sinclair/typebox';
import type { FastifyInstance, preValidationAsyncHookHandler } from 'fastify';
import type { AccountSettings } from '../../accounts/account-settings.js';
import { unixSeconds } from '../../domain/unix-seconds.js';
import { signedInSession } from '../authentication.js';
import { DASHBOARD_SECURITY, errorResponses, WRITE_ERRORS } from '../schemas.js';

const WebhookSecretSchema = Type.Object({
  secret: Type.String({ description: 'The current signing secret, `whsec_…`.' }),
  created_at: Type.Integer({ description: 'Unix seconds.' }),
  previous: Type.Array(
    Type.Object({ expires_at: Type.Integer({ description: 'Unix seconds: it stops signing then.' }) }),
    { description: 'Secrets rotated out that still sign beside the current one.' },
  ),
});

async function describe(settings: AccountSettings, accountId: string) {
  const { current, previous } = await settings.webhookSecrets(accountId);
  return {
    secret: current.secret,
    created_at: unixSeconds(current.createdAt),
    previous: previous.map((old) => ({ expires_at: unixSeconds(old.expiresAt ?? 0) })),
  };
}

export function dashboardWebhookRoutes(
  app: FastifyInstance,
  deps: { settings: AccountSettings; requireSession: preValidationAsyncHookHandler },
) {
  app.get(
    '/dashboard/api/webhook-secret',
    {
      preValidation: deps.requireSession,
      schema: {
        summary: 'The webhook signing secret',
        operationId: 'getWebhookSecret',
        tags: ['Dashboard'],
        security: DASHBOARD_SECURITY,
        response: { 200: WebhookSecretSchema, ...errorResponses('not_signed_in', 'internal_error') },
      },
    },
    async (request) => describe(deps.settings, signedInSession(request).accountId),
  );

  app.post(
    '/dashboard/api/webhook-secret/rotate',
    {
      preValidation: deps.requireSession,
      schema: {
        summary: 'Rotate the webhook signing secret',
        description: 'A new secret signs from now on; the old one signs beside it for 24 hours.',
        operationId: 'rotateWebhookSecret',
        tags: ['Dashboard'],
        security: DASHBOARD_SECURITY,
        response: {
          200: WebhookSecretSchema,
          ...errorResponses('not_signed_in', 'invalid_csrf_token', 'internal_error', ...WRITE_ERRORS),
        },
      },
    },
    async (request) => {
      const { accountId } = signedInSession(request);
      await deps.settings.rotateWebhookSecret(accountId);
      return describe(deps.settings, accountId);
    },
  );
}
