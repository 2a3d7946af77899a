import assert from 'node:assert/strict';
import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, it } from 'node:test';
import { Agent, request } from 'undici';
import { pollDelay } from '../src/engines/poll-delay.js';
import { RequestBudget, requestBudget } from '../src/outbound/request-budget.js';

describe('RequestBudget', () => {
  it("lets a second's worth through at once, then one per share of a second, and never saves up more", () => {
    let now = 0;
    const budget = new RequestBudget(4, () => now);
    assert.deepEqual([budget.take(), budget.take(), budget.take(), budget.take()], [0, 0, 0, 0]);
    assert.equal(budget.take(), 250, 'the fifth waits a quarter of a second');
    now = 250;
    assert.equal(budget.take(), 0);
    assert.equal(budget.take(), 250);
    now = 60_000;
    assert.deepEqual([budget.take(), budget.take(), budget.take(), budget.take()], [0, 0, 0, 0]);
    assert.ok(budget.take() > 0, 'a minute idle still gives only one second');
  });
});

describe('requestBudget', () => {
  it('sends every request, in the order they came', async () => {
    const seen: string[] = [];
    const server = createServer((req, res) => {
      seen.push(req.url ?? '');
      res.end('ok');
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const agent = new Agent({ connections: 1 }).compose(requestBudget(50));
    try {
      const paths = Array.from({ length: 60 }, (_, i) => `/${i}`);
      const answers = await Promise.all(
        paths.map(async (path) => (await request(base + path, { dispatcher: agent })).body.text()),
      );
      assert.deepEqual(
        answers,
        paths.map(() => 'ok'),
      );
      assert.deepEqual(seen, paths);
    } finally {
      await agent.close();
      server.close();
    }
  });
});

describe('pollDelay', () => {
  it("is the engine's interval for a young job, then 5 % of the time followed, at most 30 s", () => {
    assert.equal(pollDelay(2000, 0), 2000);
    assert.equal(pollDelay(2000, 30_000), 2000);
    assert.equal(pollDelay(2000, 120_000), 6000);
    assert.equal(pollDelay(2000, 3_600_000), 30_000);
    assert.equal(pollDelay(60_000, 3_600_000), 60_000, 'a longer interval of its own stays');
  });
});
