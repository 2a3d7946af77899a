/**
 * The queue benchmark (bench/queue-comparison/queues.ts, part of `npm run bench`; run by `npm run test:queues`, which installs the competitors first) ends by itself once it has printed
 * its table: every Redis client, BullMQ queue and worker, graphile-worker runner and store it opened is closed.
 * It runs here with a handful of jobs; it needs Redis (VIDEOGEN_BENCH_REDIS_URL, default 127.0.0.1:6379), and
 * is skipped without it unless CI=true.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { Redis } from 'ioredis';
import { TEST_DATABASE_URL } from 'videogen/dist/test/helpers/postgres.js';

const BENCH_PATH = fileURLToPath(new URL('./queues.js', import.meta.url));
const REDIS_URL = process.env.VIDEOGEN_BENCH_REDIS_URL || 'redis://127.0.0.1:6379';

async function redisProblem(): Promise<string | undefined> {
  const client = new Redis(REDIS_URL, { lazyConnect: true, retryStrategy: () => null });
  let lastError: Error | undefined;
  client.on('error', (error: Error) => {
    lastError = error;
  });
  try {
    await client.connect();
    await client.ping();
    return undefined;
  } catch (error) {
    return (lastError ?? (error instanceof Error ? error : new Error(String(error)))).message;
  } finally {
    client.disconnect();
  }
}

const problem = await redisProblem();
const skip =
  problem && process.env.CI !== 'true'
    ? `Redis at ${REDIS_URL} is unreachable (${problem}); start one or set VIDEOGEN_BENCH_REDIS_URL`
    : false;

describe('bench/queues.js', { skip }, () => {
  it('prints every system it reached, BullMQ included, and exits by itself with status 0', {
    timeout: 60_000,
  }, async (t) => {
    assert.equal(problem, undefined, `Redis at ${REDIS_URL} is unreachable (CI=true requires it)`);
    const child = spawn(process.execPath, [BENCH_PATH], {
      env: {
        ...process.env,
        LATENCY_JOBS: '5',
        THROUGHPUT_JOBS: '10',
        VIDEOGEN_BENCH_REDIS_URL: REDIS_URL,
        VIDEOGEN_BENCH_DATABASE_URL: TEST_DATABASE_URL,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    // A client left open keeps the child alive: the test then times out, and the child must not outlive it.
    t.after(() => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
    });
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    const [code, signal] = (await once(child, 'close')) as [number | null, NodeJS.Signals | null];
    assert.deepEqual({ code, signal }, { code: 0, signal: null }, stderr);
    assert.match(stdout, /^\| BullMQ \(Redis\) \| [\d.]+ ms \| [\d.]+ ms \| \d+ jobs\/s \|$/m, stdout);
    assert.match(stdout, /^\| videogen \(SQLite\) \| /m, stdout);
  });
});
