/**
 * Dashboard sign-in: checks an owner's password, limits attempts per client address (in this process's memory,
 * before anything is read or hashed) and failures per email (in the store, so every API process counts the
 * same failures), and keeps sessions whose token only the browser's cookie holds.
 */
import { createHash, randomBytes } from 'node:crypto';
import ipaddr from 'ipaddr.js';
import { refuseControlCharacters } from '../domain/control-characters.js';
import { ApiError } from '../domain/errors.js';
import { FixedWindows } from '../domain/fixed-windows.js';
import type { Environment } from '../domain/task.js';
import type { Account, AccountStore, DashboardSession, SessionStore } from '../ports/store.js';
import { hashPassword, MAX_PASSWORD_LENGTH, normaliseEmail, verifyPassword } from './accounts.js';

export interface SignInLimits {
  /** Failed sign-ins allowed per email within `windowMs`; the next attempt is refused, even with the right password. */
  readonly maxFailures: number;
  readonly windowMs: number;
  /**
   * Sign-in attempts allowed per client address (an IPv6 address's /64) a minute, whatever their outcome; the
   * next ones are refused before any password is hashed. 0: no limit.
   */
  readonly attemptsPerAddress: number;
}

export const DEFAULT_SIGN_IN_LIMITS: SignInLimits = {
  maxFailures: 5,
  windowMs: 15 * 60 * 1000,
  attemptsPerAddress: 30,
};
export const SESSION_TTL_MS = 7 * 24 * 60 * 60 * 1000;

/** The window the attempts per address are counted in. */
const ADDRESS_WINDOW_MS = 60_000;
/** Addresses tracked at once; past this the one whose window started longest ago starts afresh. */
const TRACKED_ADDRESSES = 10_000;
/**
 * Failures older than the window are forgotten at most this often: a delete by time scans the table, which the
 * limits keep small (the failures of the last window and this much), so once a minute costs little.
 */
const FORGET_EVERY_MS = 60_000;

/** How passwords are hashed and checked: argon2id (accounts.ts); a test counts the calls. */
export interface PasswordHasher {
  hash(password: string): Promise<string>;
  verify(passwordHash: string, password: string): Promise<boolean>;
}

const ARGON2: PasswordHasher = { hash: hashPassword, verify: verifyPassword };

export interface SignedIn {
  /** For the cookie; the store keeps only its hash. */
  readonly token: string;
  readonly session: DashboardSession;
}

function tokenHash(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}

/**
 * Whose attempts an address's are: an IPv4 address (also written IPv4-mapped, `::ffff:192.0.2.1`), or the /64
 * an IPv6 address is in, since one host commonly holds a whole /64.
 */
export function addressSubject(address: string): string {
  if (!ipaddr.isValid(address)) return address;
  const parsed = ipaddr.process(address);
  if (parsed.kind() === 'ipv4') return parsed.toString();
  const prefix = (parsed as ipaddr.IPv6).parts.slice(0, 4);
  return `${new ipaddr.IPv6([...prefix, 0, 0, 0, 0]).toString()}/64`;
}

export class DashboardSessions {
  readonly #store: SessionStore & AccountStore;
  readonly #limits: SignInLimits;
  readonly #now: () => number;
  readonly #passwords: PasswordHasher;
  readonly #addresses: FixedWindows;
  /** When failures were last forgotten. */
  #forgotAt = Number.NEGATIVE_INFINITY;
  /** Verified against when the email is unknown, so that the answer takes as long as for a wrong password. */
  #decoy: Promise<string> | undefined;

  constructor(
    store: SessionStore & AccountStore,
    options: { limits?: SignInLimits; now?: () => number; passwords?: PasswordHasher } = {},
  ) {
    this.#store = store;
    this.#limits = options.limits ?? DEFAULT_SIGN_IN_LIMITS;
    this.#now = options.now ?? Date.now;
    this.#passwords = options.passwords ?? ARGON2;
    this.#addresses = new FixedWindows({
      windowMs: ADDRESS_WINDOW_MS,
      maxSubjects: TRACKED_ADDRESSES,
      now: this.#now,
    });
  }

  /** Signs the owner of `rawEmail` in, for a client at `address` (its IP address, when known). */
  async signIn(rawEmail: string, password: string, address?: string): Promise<SignedIn> {
    if (address !== undefined) this.#countAttempt(address);
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
        { param: 'email', retryAfterSeconds: retryAfter },
      );
    }
    const owner = await this.#store.findAccountOwner(email);
    this.#decoy ??= this.#passwords.hash(randomBytes(16).toString('hex'));
    const valid =
      password.length <= MAX_PASSWORD_LENGTH &&
      (await this.#passwords.verify(owner?.passwordHash ?? (await this.#decoy), password));
    if (!owner || !valid) {
      await this.#recordFailure(email);
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

  /** Counts a sign-in attempt from `address`; past the limit, refuses it before anything is read or hashed. */
  #countAttempt(address: string): void {
    const max = this.#limits.attemptsPerAddress;
    if (max === 0) return;
    const { count, remainingMs } = this.#addresses.hit(addressSubject(address));
    if (count <= max) return;
    const retryAfter = Math.max(1, Math.ceil(remainingMs / 1000));
    throw new ApiError(
      'rate_limited',
      `Too many sign-in attempts from this address; try again in ${retryAfter} seconds.`,
      { retryAfterSeconds: retryAfter },
    );
  }

  /** Records a failure of `email`, and now and then forgets those too old to count against any email. */
  async #recordFailure(email: string): Promise<void> {
    await this.#store.recordSignInFailure(email);
    const now = this.#now();
    if (now - this.#forgotAt < FORGET_EVERY_MS) return;
    this.#forgotAt = now;
    await this.#store.forgetSignInFailures(now - this.#limits.windowMs);
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
