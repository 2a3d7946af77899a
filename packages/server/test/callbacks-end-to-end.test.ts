/**
 * Callbacks as an operator runs the service: the built binary, the signing secret from
 * `videogen webhooks secret` (every request verified with the `standardwebhooks` library), rotation from the
 * CLI, the delivery log in the CLI, and deliveries that survive `kill -9`.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { setTimeout } from 'node:timers/promises';
import { Webhook } from 'standardwebhooks';
import type { PublicDelivery } from '../src/domain/delivery.js';
import type { PublicTask } from '../src/domain/task.js';
import { SIGNING_SECRETS_TTL_MS } from '../src/webhooks/signing-secrets.js';
import { Api } from './helpers/api.js';
import { runCli, serverEnv, startServer } from './helpers/server-process.js';
import { until } from './helpers/until.js';
import {
  type ReceivedWebhook,
  type Reply,
  startWebhookReceiver,
  type WebhookReceiver,
} from './helpers/webhook-receiver.js';

const FAST = { model: 'videogen-2.0-fast-text-to-video', prompt: 'a lantern', duration: 4, quality: '480p' };

let workDir: string;
const receivers: WebhookReceiver[] = [];

before(async () => {
  workDir = await mkdtemp(join(tmpdir(), 'videogen-callbacks-e2e-'));
});
after(async () => {
  for (const receiver of receivers) await receiver.close();
  await rm(workDir, { recursive: true, force: true });
});

function status(webhook: ReceivedWebhook): string {
  return (JSON.parse(webhook.body) as PublicTask).status;
}

function verify(webhook: ReceivedWebhook, secret: string): PublicTask {
  return new Webhook(secret).verify(webhook.body, {
    'webhook-id': String(webhook.headers['webhook-id']),
    'webhook-timestamp': String(webhook.headers['webhook-timestamp']),
    'webhook-signature': String(webhook.headers['webhook-signature']),
  }) as PublicTask;
}

/** A receiver that answers `completed` callbacks as `completedReplies` says, in turn, then 200. */
async function receiver(completedReplies: Reply[]): Promise<WebhookReceiver> {
  let completedSeen = 0;
  const started = await startWebhookReceiver((webhook) =>
    status(webhook) === 'completed'
      ? (completedReplies[completedSeen++] ?? { status: 200 })
      : { status: 200 },
  );
  receivers.push(started);
  return started;
}

/** Polls over HTTP: every 50 ms is often enough. */
const POLL = { intervalMs: 50 } as const;

/** The JSON log lines of a process's stdout. */
function logLines(stdout: string): Record<string, unknown>[] {
  return stdout
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

async function deliveries(api: Api, taskId: string): Promise<PublicDelivery[]> {
  const { body } = await api.request<{ data: PublicDelivery[] }>('GET', `/v1/tasks/${taskId}/deliveries`);
  return body.data;
}

const completedOf = (hook: WebhookReceiver) => hook.received.filter((w) => status(w) === 'completed');

describe('callbacks end to end', () => {
  it('the CLI prints the secret that signs callbacks, rotates it, and shows the delivery log', async () => {
    const dataDir = join(workDir, 'cli');
    const env = serverEnv(dataDir);
    const server = await startServer(env);
    try {
      const key = await server.firstKey();
      assert.ok(key);
      const api = new Api(server.url, key);
      const printed = await runCli(['webhooks', 'secret'], env);
      assert.equal(printed.code, 0, printed.stderr);
      assert.match(printed.stdout, /^whsec_[A-Za-z0-9+/]{43}=\n$/, 'the secret and nothing else');
      const secret = printed.stdout.trim();

      const hook = await receiver([]);
      const { body: task } = await api.create({ ...FAST, callback_url: hook.url });
      await hook.waitFor(2, 60_000);
      // The server read the account's secrets before sending these; it keeps them up to SIGNING_SECRETS_TTL_MS
      // (a rotation by another process signs within that time, docs/architecture.md), so the redelivery below is
      // asked for only once that much has passed since: on a slow machine it already has.
      const secretsReadBefore = Date.now();
      for (const webhook of hook.received) verify(webhook, secret);

      const rotated = await runCli(['webhooks', 'rotate-secret'], env);
      assert.equal(rotated.code, 0, rotated.stderr);
      const next = rotated.stdout.trim();
      assert.match(next, /^whsec_/);
      assert.notEqual(next, secret);
      assert.equal((await runCli(['webhooks', 'secret'], env)).stdout.trim(), next);
      await setTimeout(Math.max(0, secretsReadBefore + SIGNING_SECRETS_TTL_MS - Date.now()));
      const redelivered = await api.request('POST', `/v1/tasks/${task.id}/deliveries/redeliver`);
      assert.equal(redelivered.status, 202);
      const [, , third] = await hook.waitFor(3);
      assert.ok(third);
      verify(third, secret);
      verify(third, next);

      await until(
        async () => (await deliveries(api, task.id)).every((d) => d.status === 'succeeded'),
        'the redelivery to be recorded',
        POLL,
      );
      const log = await runCli(['webhooks', 'deliveries', task.id], env);
      assert.equal(log.code, 0, log.stderr);
      const lines = log.stdout.trim().split('\n');
      assert.match(lines[0] ?? '', /^WEBHOOK ID\s+EVENT\s+STATE\s+ATTEMPTED\s+RESULT\s+DURATION$/);
      assert.equal(lines.length, 4);
      for (const webhook of hook.received)
        assert.ok(log.stdout.includes(String(webhook.headers['webhook-id'])));
      assert.equal(lines.filter((line) => /succeeded\s+\S+Z\s+HTTP 200\s+\d+ ms$/.test(line)).length, 3);
      const json = await runCli(['webhooks', 'deliveries', task.id, '--json'], env);
      assert.deepEqual(JSON.parse(json.stdout), await deliveries(api, task.id));
    } finally {
      await server.stop();
    }
  });

  it('a delivery pending a retry when the server is killed arrives once after restart, same webhook-id', async () => {
    const env = serverEnv(join(workDir, 'kill-pending'));
    const hook = await receiver([{ status: 503 }]);
    const first = await startServer(env);
    const key = await first.firstKey();
    assert.ok(key);
    let api = new Api(first.url, key);
    const { body: task } = await api.create({ ...FAST, callback_url: hook.url });
    // Killed once the failed first attempt is recorded and the retry (5 s later) is pending.
    const pending = await until(
      async () =>
        (await deliveries(api, task.id)).find((d) => d.event === 'task.completed' && d.attempts.length === 1),
      'the first completed attempt to be recorded',
      { ...POLL, timeoutMs: 60_000 },
    );
    assert.equal(pending.status, 'pending');
    assert.equal(pending.attempts[0]?.http_status, 503);
    await first.stop('SIGKILL');

    const second = await startServer(env);
    try {
      api = new Api(second.url, key);
      await until(() => completedOf(hook).length >= 2, 'the retry', POLL);
      await until(
        async () => (await deliveries(api, task.id)).every((d) => d.status === 'succeeded'),
        'the retry to be recorded',
        POLL,
      );
      const log = (await deliveries(api, task.id)).find((d) => d.id === pending.id);
      assert.deepEqual(
        log?.attempts.map((a) => a.http_status),
        [503, 200],
      );
    } finally {
      await second.stop();
    }
    // Stopped, the second server sends nothing more, and its log is complete ('close' waits for stdout): it
    // logs every attempt it makes (delivered, failed, interrupted or not recorded), so one line is one attempt.
    const attempts = logLines(second.stdout()).filter(
      (line) => line.delivery_id === pending.id && line.event === 'task.completed',
    );
    assert.deepEqual(
      attempts.map((line) => line.msg),
      ['webhook delivered'],
      'after the restart, exactly one attempt, which delivered',
    );
    const completed = completedOf(hook);
    assert.equal(completed.length, 2, 'one failed attempt, then exactly one delivery');
    assert.equal(completed[0]?.headers['webhook-id'], pending.id);
    assert.equal(completed[1]?.headers['webhook-id'], pending.id);
  });

  it('an attempt cut off by kill -9 mid-request is sent again once its claim lapses', async () => {
    const env = serverEnv(join(workDir, 'kill-in-flight'), { VIDEOGEN_WEBHOOK_TIMEOUT_SECONDS: '1' });
    const hook = await receiver([{ status: 200, hang: true }]);
    const first = await startServer(env);
    const key = await first.firstKey();
    assert.ok(key);
    const { body: task } = await new Api(first.url, key).create({ ...FAST, callback_url: hook.url });
    await until(() => completedOf(hook).length === 1, 'the first attempt', { ...POLL, timeoutMs: 60_000 });
    await first.stop('SIGKILL');

    const second = await startServer(env);
    try {
      const api = new Api(second.url, key);
      // Once the killed process's claim lapses (the 1 s attempt limit plus 10 s).
      await until(() => completedOf(hook).length >= 2, 'the second attempt', { ...POLL, timeoutMs: 60_000 });
      const completed = completedOf(hook);
      assert.equal(completed[1]?.headers['webhook-id'], completed[0]?.headers['webhook-id']);
      await until(
        async () => (await deliveries(api, task.id)).every((d) => d.status === 'succeeded'),
        'the delivery to be recorded',
        POLL,
      );
      assert.equal(completedOf(hook).length, 2);
    } finally {
      await second.stop();
    }
  });
});
