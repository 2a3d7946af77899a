import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { TaskFailure } from '../src/domain/errors.js';
import { upstreamJson, upstreamRequest } from '../src/engines/upstream-request.js';

let server: Server;
let base: string;
/** What the server answers next, per path: status codes in order (the last one repeats). */
const script = new Map<string, { status: number; headers?: Record<string, string>; body?: string }[]>();
const hits = new Map<string, number>();

before(async () => {
  server = createServer((request, response) => {
    const path = request.url ?? '/';
    const n = hits.get(path) ?? 0;
    hits.set(path, n + 1);
    const answers = script.get(path) ?? [{ status: 404 }];
    const answer = answers[Math.min(n, answers.length - 1)] ?? { status: 500 };
    response.writeHead(answer.status, answer.headers);
    response.end(answer.body ?? '');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
after(() => {
  server.close();
});

const options = (overrides: Partial<Parameters<typeof upstreamRequest>[1]> = {}) => ({
  label: 'openai engine "test"',
  signal: new AbortController().signal,
  deadline: Date.now() + 10_000,
  baseDelayMs: 5,
  ...overrides,
});

function failsWith(code: string, pattern: RegExp) {
  return (error: unknown) =>
    error instanceof TaskFailure && error.code === code && pattern.test(error.message);
}

describe('upstreamRequest', () => {
  it('retries 503 and 429 (after Retry-After) and returns the first success', async () => {
    script.set('/flaky', [
      { status: 503, body: 'busy' },
      { status: 429, headers: { 'retry-after': '0' } },
      { status: 200, headers: { 'content-type': 'application/json' }, body: '{"ok":true}' },
    ]);
    // No wait asked for but the few-ms backoff; a wait past the 10 s deadline would have given up instead.
    assert.deepEqual(await upstreamJson({ method: 'GET', url: `${base}/flaky` }, options()), { ok: true });
    assert.equal(hits.get('/flaky'), 3);
  });

  it('fails at once with upstream_error on another 4xx, quoting the answer', async () => {
    script.set('/bad', [{ status: 400, body: '{"error":{"message":"size not supported"}}' }]);
    await assert.rejects(
      upstreamRequest({ method: 'POST', url: `${base}/bad`, body: '{}' }, options()),
      failsWith('upstream_error', /openai engine "test": POST \/bad answered HTTP 400: .*size not supported/),
    );
    assert.equal(hits.get('/bad'), 1);
  });

  it('does not follow a redirect, which would take the key elsewhere', async () => {
    script.set('/moved', [{ status: 302, headers: { location: 'http://elsewhere.test/x' } }]);
    await assert.rejects(
      upstreamRequest({ method: 'GET', url: `${base}/moved` }, options()),
      failsWith(
        'upstream_error',
        /GET \/moved answered HTTP 302: a redirect to http:\/\/elsewhere\.test\/x, not followed/,
      ),
    );
    assert.equal(hits.get('/moved'), 1);
  });

  it('gives up with upstream_unavailable when the next try would pass the deadline', async () => {
    // A retry after a few ms fits in the minute left; the second answer asks for an hour, which does not.
    script.set('/down', [{ status: 502 }, { status: 503, headers: { 'retry-after': '3600' } }]);
    await assert.rejects(
      upstreamRequest({ method: 'GET', url: `${base}/down` }, options({ deadline: Date.now() + 60_000 })),
      failsWith('upstream_unavailable', /HTTP 503.* \(gave up after 2 attempts\)$/),
    );
    assert.equal(hits.get('/down'), 2);
  });

  it('retries a refused connection, then says so', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));
    await assert.rejects(
      upstreamRequest({ method: 'GET', url: `http://127.0.0.1:${port}/x` }, options({ maxAttempts: 3 })),
      failsWith('upstream_unavailable', /ECONNREFUSED.*gave up after 3 attempts/),
    );
  });

  it('stops waiting when the signal aborts, with its reason', async () => {
    script.set('/slow-retry', [{ status: 503, headers: { 'retry-after': '120' } }]);
    const controller = new AbortController();
    // Aborted once the server has answered the first attempt (however long that took), while the retry waits.
    const aborter = setInterval(() => {
      if (hits.get('/slow-retry') !== 1) return;
      clearInterval(aborter);
      controller.abort(new Error('cancelled by test'));
    }, 5);
    const started = Date.now();
    await assert.rejects(
      upstreamRequest(
        { method: 'GET', url: `${base}/slow-retry` },
        options({ signal: controller.signal, deadline: Date.now() + 600_000 }),
      ),
      /cancelled by test/,
    );
    // Far from any machine's speed, and from the 120 s that waiting Retry-After out would take.
    assert.ok(Date.now() - started < 60_000, `stopped after ${Date.now() - started} ms`);
    assert.equal(hits.get('/slow-retry'), 1);
  });
});
