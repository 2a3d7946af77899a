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
