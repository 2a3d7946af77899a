/** `videogen keys create|list|limits|revoke`: key management against the configured store. */
import { parseArgs } from 'node:util';
import { allApiKeys, createApiKey, revokeApiKey } from '../accounts/api-keys.js';
import { isActiveApiKey } from '../domain/api-key-state.js';
import { ENVIRONMENTS, type Environment } from '../domain/task.js';
import { NO_LIMITS } from '../domain/usage.js';
import type { ApiKeyRecord } from '../ports/store.js';
import { fromPublicLimits, setApiKeyLimits, toPublicLimits } from '../usage/usage-limits.js';
import { asUsageError, describeLimits, LIMIT_OPTIONS, limitChanges } from './limit-options.js';
import { printTable } from './print-table.js';
import { withStore } from './store-session.js';
import { UsageError } from './usage-error.js';

function isoOrDash(ms: number | null): string {
  return ms === null ? '-' : new Date(ms).toISOString();
}

export async function keysCommand(args: string[]): Promise<number> {
  const [action, ...rest] = args;
  switch (action) {
    case 'create': {
      const { values } = parseArgs({
        args: rest,
        options: {
          name: { type: 'string' },
          env: { type: 'string', default: 'development' },
          account: { type: 'string' },
          ...LIMIT_OPTIONS,
        },
        strict: true,
      });
      if (!values.name) throw new UsageError('keys create needs --name NAME');
      const limits = await asUsageError(async () =>
        fromPublicLimits({ ...toPublicLimits(NO_LIMITS), ...limitChanges(values) }),
      );
      if (!ENVIRONMENTS.includes(values.env as Environment)) {
        throw new UsageError(`--env must be one of ${ENVIRONMENTS.join(', ')}`);
      }
      const created = await withStore('create', (store) =>
        createApiKey(store, {
          name: values.name!,
          environment: values.env as Environment,
          accountId: values.account,
          limits,
        }),
      );
      // The key alone on stdout, so that scripts can capture it.
      process.stdout.write(`${created.key}\n`);
      return 0;
    }
    case 'list': {
      const { values } = parseArgs({
        args: rest,
        options: { json: { type: 'boolean', default: false } },
        strict: true,
      });
      const keys = await withStore('read', (store) => allApiKeys(store));
      if (values.json) {
        process.stdout.write(`${JSON.stringify(keys, null, 2)}\n`);
        return 0;
      }
      const now = Date.now();
      const state = (k: ApiKeyRecord) => {
        if (k.revokedAt !== null) return 'revoked';
        if (!isActiveApiKey(k, now)) return 'expired';
        // A rotated key works through its grace period.
        return k.expiresAt === null ? 'active' : `active until ${isoOrDash(k.expiresAt)}`;
      };
      const rows = keys.map((k) => [
        k.id,
        k.prefix,
        k.name,
        k.environment,
        state(k),
        isoOrDash(k.createdAt),
        isoOrDash(k.lastUsedAt),
        describeLimits(k.limits),
      ]);
      printTable(['ID', 'PREFIX', 'NAME', 'ENV', 'STATE', 'CREATED', 'LAST USED', 'LIMITS'], rows);
      return 0;
    }
    case 'limits': {
      const { values, positionals } = parseArgs({
        args: rest,
        options: LIMIT_OPTIONS,
        allowPositionals: true,
        strict: true,
      });
      const target = positionals[0];
      if (!target || positionals.length > 1) {
        throw new UsageError('keys limits needs exactly one key ID or prefix');
      }
      const changes = limitChanges(values);
      const key = await withStore('read', (store) =>
        asUsageError(() => setApiKeyLimits(store, target, changes)),
      );
      if (!key) {
        process.stderr.write(`videogen: no single active key matches ${JSON.stringify(target)}\n`);
        return 1;
      }
      process.stdout.write(`${key.prefix}: ${describeLimits(key.limits)}\n`);
      return 0;
    }
    case 'revoke': {
      const { positionals } = parseArgs({ args: rest, options: {}, allowPositionals: true, strict: true });
      const target = positionals[0];
      if (!target || positionals.length > 1)
        throw new UsageError('keys revoke needs exactly one key ID or prefix');
      const revoked = await withStore('read', (store) => revokeApiKey(store, target));
      if (!revoked) {
        process.stderr.write(`videogen: no single active key matches ${JSON.stringify(target)}\n`);
        return 1;
      }
      process.stdout.write(`revoked ${target}\n`);
      return 0;
    }
    default:
      throw new UsageError(action ? `unknown keys action ${JSON.stringify(action)}` : 'keys needs an action');
  }
}
