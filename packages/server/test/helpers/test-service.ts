/** Starts the whole service in this process on 127.0.0.1, with a fresh data dir and a silent logger. */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { createApiKey } from '../../src/accounts/api-keys.js';
import { loadConfig } from '../../src/config.js';
import type { Environment } from '../../src/domain/task.js';
import { type Service, type ServiceOptions, startService } from '../../src/service.js';

export interface TestService {
  readonly service: Service;
  readonly url: string;
  readonly dataDir: string;
  /** A new key for `accountId` (a new account when absent). */
  newKey(
    environment?: Environment,
    accountId?: string,
  ): Promise<{ key: string; accountId: string; id: string }>;
  close(): Promise<void>;
}

export async function startTestService(
  env: Record<string, string> = {},
  options: ServiceOptions = {},
): Promise<TestService> {
  const dataDir = await mkdtemp(join(tmpdir(), 'videogen-test-'));
  const config = loadConfig({
    VIDEOGEN_DATA_DIR: dataDir,
    VIDEOGEN_HOST: '127.0.0.1',
    VIDEOGEN_PORT: '0',
    VIDEOGEN_ALLOW_PRIVATE_NETWORKS: 'true',
    VIDEOGEN_WORKER_CONCURRENCY: '0',
    ...env,
  });
  const service = await startService(config, pino({ level: 'silent' }), options);
  return {
    service,
    url: service.publicUrl,
    dataDir,
    async newKey(environment = 'development', accountId) {
      const account = accountId ?? (await service.store.createAccount()).id;
      const created = await createApiKey(service.store, { name: 'test', environment, accountId: account });
      return { key: created.key, accountId: account, id: created.record.id };
    },
    async close() {
      await service.close();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}
