/** Dashboard sign-in and the session: sign in, sign out, who is signed in, which environment they look at. */
import { type Static, Type } from '@sinclair/typebox';
import type { FastifyInstance, preValidationAsyncHookHandler } from 'fastify';
import type { DashboardSessions } from '../../accounts/dashboard-sessions.js';
import { ApiError, type ApiErrorCode } from '../../domain/errors.js';
import { ENVIRONMENTS, type Environment } from '../../domain/task.js';
import type { DashboardSession } from '../../ports/store.js';
import { signedInSession } from '../authentication.js';
import { BODY_ERRORS, DASHBOARD_SECURITY, errorResponses, FIELD_ERRORS, WRITE_ERRORS } from '../schemas.js';
import { clearSessionCookie, sessionToken, setSessionCookie } from '../session-cookie.js';

const EnvironmentSchema = Type.Union(ENVIRONMENTS.map((env) => Type.Literal(env)));

const SessionSchema = Type.Object({
  account: Type.Object({ id: Type.String(), email: Type.String() }),
  environment: EnvironmentSchema,
  csrf_token: Type.String({ description: 'Send it as `X-CSRF-Token` with every state-changing request.' }),
});
type SessionBody = Static<typeof SessionSchema>;

const SessionStatusSchema = Type.Union([
  Type.Object({ signed_in: Type.Literal(false) }),
  Type.Object({ signed_in: Type.Literal(true), ...SessionSchema.properties }),
]);
type SessionStatusBody = Static<typeof SessionStatusSchema>;

const SignInSchema = Type.Object(
  {
    email: Type.String({ minLength: 1, maxLength: 254 }),
    password: Type.String({ minLength: 1, maxLength: 1024 }),
  },
  { additionalProperties: false },
);

const SessionCookieHeader = (description: string) => Type.String({ description });

const SESSION_ERRORS = ['not_signed_in', 'internal_error'] as const;
const CHANGE_ERRORS: readonly ApiErrorCode[] = [...SESSION_ERRORS, 'invalid_csrf_token', ...WRITE_ERRORS];

export function dashboardSessionRoutes(
  app: FastifyInstance,
  deps: {
    sessions: DashboardSessions;
    requireSession: preValidationAsyncHookHandler;
    secureCookies: boolean;
  },
) {
  /** The session's body; undefined when its account no longer has an owner. */
  async function body(session: DashboardSession): Promise<SessionBody | undefined> {
    const account = await deps.sessions.account(session);
    if (!account?.email) return undefined;
    return {
      account: { id: account.id, email: account.email },
      environment: session.environment,
      csrf_token: session.csrfToken,
    };
  }

  async function describe(session: DashboardSession): Promise<SessionBody> {
    const described = await body(session);
    if (!described) throw new ApiError('not_signed_in', 'Sign in to the dashboard first.');
    return described;
  }

  app.post<{ Body: Static<typeof SignInSchema> }>(
    '/dashboard/api/sign-in',
    {
      schema: {
        summary: 'Sign in to the dashboard',
        description:
          'Sets the `videogen_session` cookie. Five failed sign-ins for one email within 15 minutes refuse the ' +
          'next ones (`rate_limited` with `param` `email`, and `Retry-After`) until the oldest of them is 15 ' +
          'minutes old. Past `VIDEOGEN_SIGN_IN_ATTEMPTS_PER_MINUTE` attempts from one client address (an IPv6 ' +
          "address's /64) in a minute, the next ones are refused (`rate_limited`, with `Retry-After`) until the " +
          'minute ends.',
        operationId: 'signIn',
        tags: ['Dashboard'],
        body: SignInSchema,
        response: {
          200: {
            description: 'Signed in.',
            headers: {
              'Set-Cookie': SessionCookieHeader(
                '`videogen_session`, the session (HttpOnly, SameSite=Strict).',
              ),
            },
            content: { 'application/json': { schema: SessionSchema } },
          },
          ...errorResponses(
            ...FIELD_ERRORS,
            'invalid_credentials',
            'rate_limited',
            'internal_error',
            ...WRITE_ERRORS,
            ...BODY_ERRORS,
          ),
        },
      },
    },
    async (request, reply) => {
      const { token, session } = await deps.sessions.signIn(
        request.body.email,
        request.body.password,
        request.ip,
      );
      setSessionCookie(reply, token, deps.secureCookies);
      return describe(session);
    },
  );

  app.post(
    '/dashboard/api/sign-out',
    {
      preValidation: deps.requireSession,
      schema: {
        summary: 'Sign out of the dashboard',
        operationId: 'signOut',
        tags: ['Dashboard'],
        security: DASHBOARD_SECURITY,
        response: {
          204: Type.Null({
            description: 'Signed out; the cookie is cleared.',
            headers: { 'Set-Cookie': SessionCookieHeader('`videogen_session`, expired.') },
          }),
          ...errorResponses(...CHANGE_ERRORS),
        },
      },
    },
    async (request, reply) => {
      await deps.sessions.signOut(signedInSession(request));
      clearSessionCookie(reply, deps.secureCookies);
      return reply.code(204).send();
    },
  );

  app.get(
    '/dashboard/api/session',
    {
      preValidation: deps.requireSession,
      schema: {
        summary: 'The signed-in session',
        operationId: 'getSession',
        tags: ['Dashboard'],
        security: DASHBOARD_SECURITY,
        response: { 200: SessionSchema, ...errorResponses(...SESSION_ERRORS) },
      },
    },
    async (request) => describe(signedInSession(request)),
  );

  // The page asks this on load instead of GET /dashboard/api/session, whose 401 for a signed-out visitor every
  // browser logs as an error in its console.
  app.get(
    '/dashboard/api/session/status',
    {
      schema: {
        summary: 'Whether the dashboard is signed in',
        description:
          'Answers `200` with or without a session: `{"signed_in": false}` without a live `videogen_session` ' +
          'cookie, otherwise `signed_in: true` and the session as `GET /dashboard/api/session` answers it.',
        operationId: 'getSessionStatus',
        tags: ['Dashboard'],
        response: { 200: SessionStatusSchema, ...errorResponses('internal_error') },
      },
    },
    async (request): Promise<SessionStatusBody> => {
      const token = sessionToken(request);
      const session = token ? await deps.sessions.find(token) : undefined;
      const described = session && (await body(session));
      return described ? { signed_in: true, ...described } : { signed_in: false };
    },
  );

  app.put<{ Body: { environment: Environment } }>(
    '/dashboard/api/session/environment',
    {
      preValidation: deps.requireSession,
      schema: {
        summary: "Switch the dashboard's environment",
        description: "Requests made with the session cookie act on this environment's keys-worth of tasks.",
        operationId: 'setSessionEnvironment',
        tags: ['Dashboard'],
        security: DASHBOARD_SECURITY,
        body: Type.Object({ environment: EnvironmentSchema }, { additionalProperties: false }),
        response: {
          200: SessionSchema,
          ...errorResponses(...FIELD_ERRORS, ...CHANGE_ERRORS, ...BODY_ERRORS),
        },
      },
    },
    async (request) => {
      const session = signedInSession(request);
      return describe(await deps.sessions.setEnvironment(session, request.body.environment));
    },
  );
}
