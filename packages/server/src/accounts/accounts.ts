/**
 * Accounts with an owner who signs in to the dashboard: email and an argon2id password hash. Made by
 * `videogen accounts create`; the dashboard itself never creates accounts.
 */
import { hasControlCharacters } from '../domain/control-characters.js';
import type { AccountStore } from '../ports/store.js';

export const MIN_PASSWORD_LENGTH = 10;
/** argon2 hashes what it is given; a megabyte "password" would only cost us time. */
export const MAX_PASSWORD_LENGTH = 1024;

export class AccountError extends Error {}

/** Emails compare without case: `Ada@Example.com` and `ada@example.com` are one owner. */
export function normaliseEmail(email: string): string {
  return email.trim().toLowerCase();
}

function checkEmail(email: string): void {
  if (email.length > 254 || !/^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(email) || hasControlCharacters(email)) {
    throw new AccountError(`${JSON.stringify(email)} is not an email address`);
  }
}

function checkPassword(password: string): void {
  if (password.length < MIN_PASSWORD_LENGTH) {
    throw new AccountError(`the password must have at least ${MIN_PASSWORD_LENGTH} characters`);
  }
  if (password.length > MAX_PASSWORD_LENGTH) {
    throw new AccountError(`the password must have at most ${MAX_PASSWORD_LENGTH} characters`);
  }
}

// argon2 is loaded at the first sign-in or password change: about 10 MB of memory a server whose dashboard
// nobody signs in to does not need.
export async function hashPassword(password: string): Promise<string> {
  const { Algorithm, hash } = await import('@node-rs/argon2');
  return hash(password, { algorithm: Algorithm.Argon2id });
}

export async function verifyPassword(passwordHash: string, password: string): Promise<boolean> {
  const { verify } = await import('@node-rs/argon2');
  return verify(passwordHash, password);
}

/**
 * Creates an account with its dashboard owner or, with `accountId`, gives that existing account (one made for
 * keys only, such as the first account `serve` makes) its owner.
 */
export async function createOwnerAccount(
  store: Pick<AccountStore, 'setAccountOwner' | 'createOwnedAccount'>,
  owner: { email: string; password: string; accountId?: string },
): Promise<{ accountId: string; email: string }> {
  const email = normaliseEmail(owner.email);
  checkEmail(email);
  checkPassword(owner.password);
  const credentials = { email, passwordHash: await hashPassword(owner.password) };
  if (owner.accountId !== undefined) {
    if (!(await store.setAccountOwner(owner.accountId, credentials))) {
      throw new AccountError(
        `account ${owner.accountId} does not exist, has an owner already, or ${email} has an account`,
      );
    }
    return { accountId: owner.accountId, email };
  }
  const account = await store.createOwnedAccount(credentials);
  if (!account) throw new AccountError(`an account for ${email} exists already`);
  return { accountId: account.id, email };
}

/**
 * Sets a new password for the owner of `email` (a forgotten one, or one that leaked): every dashboard session of
 * the account ends, and a sign-in lockout for the email is lifted.
 */
export async function resetOwnerPassword(
  store: Pick<AccountStore, 'setOwnerPassword'>,
  owner: { email: string; password: string },
): Promise<void> {
  const email = normaliseEmail(owner.email);
  checkPassword(owner.password);
  if (!(await store.setOwnerPassword(email, await hashPassword(owner.password)))) {
    throw new AccountError(`no account is owned by ${email}`);
  }
}
