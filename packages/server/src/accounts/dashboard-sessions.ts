/**
 * Dashboard sign-in: checks an owner's password, rate limits failures per email (in the store, so every API
 * process counts the same failures), and keeps sessions whose token only the browser's cookie holds.
 */
import { createHash, randomBytes } from 'node:crypto';
import { refuseControlCharacters } from '../domain/control-characters.js';
import { ApiError } from '../domain/errors.js';
import type { Environment } from '../domain/task.js';
import type { Account, AccountStore, DashboardSession, SessionStore } from '../ports/store.js';
import { hashPassword, MAX_PASSWORD_LENGTH, normaliseEmail, verifyPassword } from './accounts.js';

export interface SignInLimits {
  /** Failed sign-ins allowed per email within `windowMs`; the next attempt is refused, even with the right password. */
  readonly maxFailures: number;
  readonly windowMs: number;
}

export const DEFAULT_SIGN_IN_LIMITS: SignInLimits = { maxFailures: 5, windowMs: 15 * 60 * 1000 };
export const SESSION_TTL_MS = 7 * 24 * 60 * 60 * 1000;

export interface SignedIn {
  /** For the cookie; the store keeps only its hash. */
  readonly token: string;
  readonly session: DashboardSession;
}

function tokenHash(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}

export class DashboardSessions {
  readonly #store: SessionStore & AccountStore;
  readonly #limits: SignInLimits;
  readonly #now: () => number;
  /** Verified against when the email is unknown, so that the answer takes as long as for a wrong password. */
  #decoy: Promise<string> | undefined;

  constructor(
    store: SessionStore & AccountStore,
    limits: SignInLimits = DEFAULT_SIGN_IN_LIMITS,
    now: () => number = Date.now,
  ) {
    this.#store = store;
    this.#limits = limits;
    this.#now = now;
  }

  async signIn(rawEmail: string, password: string): Promise<SignedIn> {
    // No address has one: refused before it is counted as a failure under that "email".
    refuseControlCharacters(rawEmail, 'email');
    const email = normaliseEmail(rawEmail);
    const since = this.#now() - this.#limits.windowMs;
    const failures = await this.#store.listSignInFailures(email, since);
    const oldest = failures.at(-this.#limits.maxFailures);
    if (failures.length >= this.#limits.maxFailures && oldest !== undefined) {
      const retryAfter = Math.max(1, Math.ceil((oldest + this.#limits.windowMs - this.#now()) / 1000));
      throw new ApiError(
        'rate_limited',
        `Too many failed sign-ins for this email; try again in ${retryAfter} seconds.`,
        { headers: { 'retry-after': String(retryAfter) } },
      );
    }
    const owner = await this.#store.findAccountOwner(email);
    this.#decoy ??= hashPassword(randomBytes(16).toString('hex'));
    const valid =
      password.length <= MAX_PASSWORD_LENGTH &&
      (await verifyPassword(owner?.passwordHash ?? (await this.#decoy), password));
    if (!owner || !valid) {
      await this.#store.recordSignInFailure(email);
      throw new ApiError('invalid_credentials', 'The email or password is wrong.');
    }
    const token = randomBytes(32).toString('base64url');
    const session = await this.#store.createSession({
      tokenHash: tokenHash(token),
      accountId: owner.accountId,
      csrfToken: randomBytes(24).toString('base64url'),
      environment: 'development',
      expiresAt: this.#now() + SESSION_TTL_MS,
    });
    return { token, session };
  }

  /** The session a cookie's token belongs to, if it has not expired. */
  find(token: string): Promise<DashboardSession | undefined> {
    return this.#store.findSession(tokenHash(token));
  }

  async setEnvironment(session: DashboardSession, environment: Environment): Promise<DashboardSession> {
    await this.#store.setSessionEnvironment(session.tokenHash, environment);
    return { ...session, environment };
  }

  signOut(session: DashboardSession): Promise<void> {
    return this.#store.deleteSession(session.tokenHash);
  }

  /** The session's account; undefined when it no longer exists. */
  account(session: DashboardSession): Promise<Account | undefined> {
    return this.#store.getAccount(session.accountId);
  }
}
