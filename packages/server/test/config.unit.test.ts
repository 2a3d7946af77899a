import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ConfigError, loadConfig } from '../src/config.js';

describe('loadConfig', () => {
  it('defaults to SQLite and files under ./data, port 8080, one worker', () => {
    const config = loadConfig({}, '/srv/app');
    assert.equal(config.port, 8080);
    assert.equal(config.dataDir, '/srv/app/data');
    assert.equal(config.databaseUrl, '/srv/app/data/videogen.db');
    assert.equal(config.storageUrl, 'file:///srv/app/data/files');
    assert.equal(config.workerConcurrency, 1);
    assert.equal(config.leaseMs, 30_000);
    assert.equal(config.maxAttempts, 3);
    assert.equal(config.resultUrlTtlSeconds, 86_400);
    assert.equal(config.allowPrivateNetworks, false);
    assert.equal(config.publicUrl, undefined);
  });

  it('reads VIDEOGEN_* variables', () => {
    const config = loadConfig(
      {
        VIDEOGEN_PORT: '9000',
        VIDEOGEN_DATA_DIR: '/var/lib/videogen',
        VIDEOGEN_PUBLIC_URL: 'https://videos.example.com/',
        VIDEOGEN_ALLOW_PRIVATE_NETWORKS: 'true',
        VIDEOGEN_LEASE_SECONDS: '5',
      },
      '/srv/app',
    );
    assert.equal(config.port, 9000);
    assert.equal(config.databaseUrl, '/var/lib/videogen/videogen.db');
    assert.equal(config.publicUrl, 'https://videos.example.com');
    assert.equal(config.allowPrivateNetworks, true);
    assert.equal(config.leaseMs, 5000);
  });

  it('reads the limits, with their defaults', () => {
    const defaults = loadConfig({}, '/srv/app');
    assert.equal(defaults.rateLimitPerMinute, 600);
    assert.equal(defaults.rateLimitWindowMs, 60_000);
    assert.equal(defaults.maxQueuedTasks, 10_000);
    assert.equal(defaults.maxActiveTasksPerAccount, 0);
    assert.equal(defaults.maxBodyBytes, 20 * 1024 * 1024);
    assert.equal(defaults.maxOtherBodyBytes, 64 * 1024);
    const set = loadConfig({
      VIDEOGEN_RATE_LIMIT_PER_MINUTE: '0',
      VIDEOGEN_RATE_LIMIT_WINDOW_SECONDS: '10',
      VIDEOGEN_MAX_QUEUED_TASKS: '0',
      VIDEOGEN_MAX_ACTIVE_TASKS_PER_ACCOUNT: '4',
      VIDEOGEN_MAX_OTHER_BODY_KB: '16',
    });
    assert.equal(set.rateLimitPerMinute, 0);
    assert.equal(set.rateLimitWindowMs, 10_000);
    assert.equal(set.maxQueuedTasks, 0);
    assert.equal(set.maxActiveTasksPerAccount, 4);
    assert.equal(set.maxOtherBodyBytes, 16 * 1024);
    assert.throws(
      () => loadConfig({ VIDEOGEN_RATE_LIMIT_PER_MINUTE: '-1' }),
      /VIDEOGEN_RATE_LIMIT_PER_MINUTE/,
    );
    assert.throws(
      () => loadConfig({ VIDEOGEN_RATE_LIMIT_WINDOW_SECONDS: '0' }),
      /VIDEOGEN_RATE_LIMIT_WINDOW_SECONDS/,
    );
  });

  it('names the variable that is wrong', () => {
    assert.throws(
      () => loadConfig({ VIDEOGEN_PORT: 'eighty' }),
      (e: unknown) => e instanceof ConfigError && /VIDEOGEN_PORT/.test(e.message),
    );
    assert.throws(() => loadConfig({ VIDEOGEN_WORKER_CONCURRENCY: '-1' }), /VIDEOGEN_WORKER_CONCURRENCY/);
    assert.throws(
      () => loadConfig({ VIDEOGEN_ALLOW_PRIVATE_NETWORKS: 'maybe' }),
      /VIDEOGEN_ALLOW_PRIVATE_NETWORKS/,
    );
    assert.throws(() => loadConfig({ VIDEOGEN_PUBLIC_URL: 'ftp://x' }), /VIDEOGEN_PUBLIC_URL/);
  });
});
