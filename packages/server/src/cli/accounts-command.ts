/**
 * `videogen accounts create|reset-password|limits`: an account with an owner who signs in to the dashboard, a new
 * password for an owner, and the account's monthly limits.
 */
import { createInterface } from 'node:readline';
import { parseArgs } from 'node:util';
import { createOwnerAccount, MIN_PASSWORD_LENGTH, resetOwnerPassword } from '../accounts/accounts.js';
import { setAccountLimits } from '../usage/usage-limits.js';
import { asUsageError, describeLimits, LIMIT_OPTIONS, limitChanges } from './limit-options.js';
import { withStore } from './store-session.js';
import { UsageError } from './usage-error.js';

/**
 * The password: the first line of stdin when it is piped (scripts, secret managers), else typed at a prompt
 * that does not echo it. Never an argument: those end up in shell history and `ps`.
 */
async function readPassword(): Promise<string> {
  const input = process.stdin;
  if (!input.isTTY) {
    const lines = createInterface({ input, crlfDelay: Number.POSITIVE_INFINITY });
    for await (const line of lines) {
      lines.close();
      return line;
    }
    return '';
  }
  process.stderr.write(`Password (at least ${MIN_PASSWORD_LENGTH} characters): `);
  input.setRawMode(true);
  input.resume();
  let password = '';
  try {
    for await (const chunk of input as AsyncIterable<Buffer>) {
      for (const char of chunk.toString('utf8')) {
        if (char === '\r' || char === '\n') return password;
        if (char === '\u0003') throw new UsageError('cancelled');
        if (char === '\u007f' || char === '\b') password = password.slice(0, -1);
        else password += char;
      }
    }
    return password;
  } finally {
    input.setRawMode(false);
    input.pause();
    process.stderr.write('\n');
  }
}

export async function accountsCommand(args: string[]): Promise<number> {
  const [action, ...rest] = args;
  switch (action) {
    case 'create': {
      const { values } = parseArgs({
        args: rest,
        options: { email: { type: 'string' }, account: { type: 'string' } },
        strict: true,
      });
      if (!values.email) throw new UsageError('accounts create needs --email EMAIL');
      const created = await withStore('create', async (store) =>
        createOwnerAccount(store, {
          email: values.email!,
          password: await readPassword(),
          accountId: values.account,
        }),
      );
      // The id alone on stdout, for scripts; the rest is for people.
      process.stdout.write(`${created.accountId}\n`);
      process.stderr.write(`${created.email} can sign in at /dashboard.\n`);
      return 0;
    }
    case 'reset-password': {
      const { values } = parseArgs({ args: rest, options: { email: { type: 'string' } }, strict: true });
      if (!values.email) throw new UsageError('accounts reset-password needs --email EMAIL');
      // The store is found before the password is asked for.
      await withStore('read', async (store) =>
        resetOwnerPassword(store, { email: values.email!, password: await readPassword() }),
      );
      process.stderr.write('Password changed; every dashboard session of the account has ended.\n');
      return 0;
    }
    case 'limits': {
      const { values } = parseArgs({
        args: rest,
        options: { account: { type: 'string' }, ...LIMIT_OPTIONS },
        strict: true,
      });
      if (!values.account) throw new UsageError('accounts limits needs --account ACCOUNT_ID');
      const changes = limitChanges(values);
      const accountId = values.account;
      const limits = await withStore('read', (store) =>
        asUsageError(() => setAccountLimits(store, accountId, changes)),
      );
      if (!limits) {
        process.stderr.write(`videogen: no account ${JSON.stringify(accountId)}\n`);
        return 1;
      }
      process.stdout.write(`${accountId}: ${describeLimits(limits)}\n`);
      return 0;
    }
    default:
      throw new UsageError(
        action ? `unknown accounts action ${JSON.stringify(action)}` : 'accounts needs an action',
      );
  }
}
