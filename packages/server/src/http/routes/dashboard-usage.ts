/**
 * The dashboard's account limits: the account's monthly limits with this month's use of the whole account (every
 * environment, as the limits count it), and setting them. The usage chart itself reads `GET /v1/usage`.
 */
import { Type } from '@sinclair/typebox';
import type { FastifyInstance, FastifyRequest, preValidationAsyncHookHandler } from 'fastify';
import type { AccountSettings } from '../../accounts/account-settings.js';
import { unixSeconds } from '../../domain/unix-seconds.js';
import { nextMonthStart } from '../../domain/usage.js';
import { type PublicLimits, toPublicLimits } from '../../usage/usage-limits.js';
import type { UsageService } from '../../usage/usage-service.js';
import { signedInSession } from '../authentication.js';
import { BODY_ERRORS, DASHBOARD_SECURITY, errorResponses, LIMIT_ERRORS, WRITE_ERRORS } from '../schemas.js';
import { LimitsChangeSchema, LimitsSchema, limitsChange } from './dashboard-limits.js';

const FiguresSchema = Type.Object({
  tasks: Type.Integer(),
  video_seconds: Type.Integer(),
  cost: Type.Optional(Type.Number()),
});

const AccountLimitsSchema = Type.Object({
  limits: LimitsSchema,
  currency: Type.Union([Type.String(), Type.Null()], {
    description:
      'Of `monthly_budget` and `cost`; null without configured prices (a budget then holds nothing).',
  }),
  this_month: Type.Object(
    { used: FiguresSchema, reserved: FiguresSchema },
    { description: "The whole account's completed tasks this month, and its tasks still running." },
  ),
  resets_at: Type.Integer({
    description: 'Unix seconds: the start of next month (UTC), when the limits reset.',
  }),
});

const READ_ERRORS = ['not_signed_in', 'internal_error'] as const;

export function dashboardUsageRoutes(
  app: FastifyInstance,
  deps: { settings: AccountSettings; usage: UsageService; requireSession: preValidationAsyncHookHandler },
) {
  const accountOf = (request: FastifyRequest) => signedInSession(request).accountId;

  async function answer(accountId: string) {
    const limits = (await deps.settings.limits(accountId)) ?? {
      monthlyVideoSeconds: null,
      monthlyBudgetMicros: null,
    };
    const { totals } = await deps.usage.thisMonth(accountId, 'model');
    const { reserved, ...used } = totals;
    return {
      limits: toPublicLimits(limits),
      currency: deps.usage.currency ?? null,
      this_month: { used, reserved },
      resets_at: unixSeconds(nextMonthStart(Date.now())),
    };
  }

  app.get(
    '/dashboard/api/limits',
    {
      preValidation: deps.requireSession,
      schema: {
        summary: "The account's monthly limits and this month's use",
        operationId: 'getAccountLimits',
        tags: ['Dashboard'],
        security: DASHBOARD_SECURITY,
        response: { 200: AccountLimitsSchema, ...errorResponses(...READ_ERRORS) },
      },
    },
    async (request) => answer(accountOf(request)),
  );

  app.post<{ Body: Partial<PublicLimits> }>(
    '/dashboard/api/limits',
    {
      preValidation: deps.requireSession,
      schema: {
        summary: "Set the account's monthly limits",
        description: 'Changes the limits named (null: no limit) and keeps the others.',
        operationId: 'setAccountLimits',
        tags: ['Dashboard'],
        security: DASHBOARD_SECURITY,
        body: LimitsChangeSchema,
        response: {
          200: AccountLimitsSchema,
          ...errorResponses(
            ...LIMIT_ERRORS,
            'invalid_csrf_token',
            ...READ_ERRORS,
            ...WRITE_ERRORS,
            ...BODY_ERRORS,
          ),
        },
      },
    },
    async (request) => {
      const accountId = accountOf(request);
      await limitsChange(() => deps.settings.setLimits(accountId, request.body));
      return answer(accountId);
    },
  );
}
