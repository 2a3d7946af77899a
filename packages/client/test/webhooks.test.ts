/**
 * `verifyWebhook` end to end: a task with a `callback_url` on a node:http receiver, its callbacks verified
 * with the account's secret from `videogen webhooks secret`; tampered bodies, other secrets, stale and
 * future timestamps and missing headers refused; both signatures of a secret rotation accepted.
 */
import assert from 'node:assert/strict';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { setTimeout as delay } from 'node:timers/promises';
import { runInNewContext } from 'node:vm';
import { VideogenClient, verifyWebhook, WebhookVerificationError } from '../src/index.js';
import { startServer, type TestServer } from './helpers/server.js';

/** How long the server may sign with secrets it read before (docs/api.md). */
const SECRETS_READ_EVERY_MS = 1000;

interface Received {
  readonly headers: IncomingHttpHeaders;
  /** The raw bytes, exactly as they arrived. */
  readonly body: Uint8Array<ArrayBuffer>;
}

class Receiver {
  readonly received: Received[] = [];
  private readonly server: Server;
  private wake: (() => void) | undefined;

  constructor() {
    this.server = createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        this.received.push({ headers: request.headers, body: new Uint8Array(Buffer.concat(chunks)) });
        this.wake?.();
        response.writeHead(204).end();
      });
    });
  }

  async listen(): Promise<string> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/hooks/videogen`;
  }

  /** Resolves with the first callback that satisfies `match`, waiting for it up to `timeoutMs`. */
  async waitFor(match: (received: Received) => boolean, timeoutMs = 20_000): Promise<Received> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const found = this.received.find(match);
      if (found) return found;
      if (Date.now() > deadline) throw new Error(`no matching callback among ${this.received.length}`);
      await new Promise<void>((resolve) => {
        this.wake = resolve;
        setTimeout(resolve, 200);
      });
    }
  }

  close(): Promise<void> {
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

const statusOf = (received: Received): string =>
  (JSON.parse(new TextDecoder().decode(received.body)) as { status: string }).status;
const timestampOf = (received: Received): number => Number(received.headers['webhook-timestamp']);

function refusedWith(code: string) {
  return (error: unknown) => {
    assert.ok(error instanceof WebhookVerificationError, String(error));
    assert.equal(error.code, code);
    return true;
  };
}

describe('verifyWebhook against real callbacks', () => {
  let server: TestServer;
  let receiver: Receiver;
  let callbackUrl: string;
  let client: VideogenClient;
  let secret: string;
  let completed: Received;
  /** When the server had read the account's secrets for the callbacks so far: before `completed` arrived. */
  let secretsReadBefore: number;

  before(async () => {
    server = await startServer();
    receiver = new Receiver();
    callbackUrl = await receiver.listen();
    client = new VideogenClient({ baseUrl: server.url, apiKey: server.apiKey });
    secret = (await server.cli(['webhooks', 'secret'])).trim();
    const task = await client.generate({
      model: 'videogen-2.0-fast-text-to-video',
      prompt: 'a red kite',
      duration: 4,
      quality: '480p',
      callback_url: callbackUrl,
    });
    completed = await receiver.waitFor((received) => statusOf(received) === 'completed');
    secretsReadBefore = Date.now();
    assert.equal(JSON.parse(new TextDecoder().decode(completed.body)).id, task.id);
  });
  after(async () => {
    await receiver?.close();
    await server?.stop();
  });

  it('accepts the callbacks the server signed, as bytes or text, with Node or fetch headers', async () => {
    assert.match(secret, /^whsec_/);
    const processing = await receiver.waitFor((received) => statusOf(received) === 'processing');
    const fromNode = await verifyWebhook(processing.body, processing.headers, secret);
    assert.equal(fromNode.status, 'processing');

    const task = await verifyWebhook(new TextDecoder().decode(completed.body), completed.headers, secret);
    assert.equal(task.status, 'completed');
    assert.ok(task.status === 'completed' && task.results[0].includes('/v1/results/'));

    // A fetch Request, as Hono, Deno, Bun and edge runtimes hand it over.
    const headers = new Headers();
    for (const [name, value] of Object.entries(completed.headers)) {
      if (typeof value === 'string') headers.set(name, value);
    }
    const request = new Request(callbackUrl, { method: 'POST', headers, body: completed.body });
    const viaFetch = await verifyWebhook(await request.arrayBuffer(), request.headers, secret);
    assert.equal(viaFetch.id, task.id);
  });

  it('refuses a tampered body, another secret and a missing header', async () => {
    const tampered = new TextDecoder().decode(completed.body).replace('"completed"', '"failed"');
    await assert.rejects(
      verifyWebhook(tampered, completed.headers, secret),
      refusedWith('invalid_webhook_signature'),
    );
    const flipped = new Uint8Array(completed.body);
    flipped[flipped.length - 2] = (flipped[flipped.length - 2] ?? 0) ^ 1;
    await assert.rejects(
      verifyWebhook(flipped, completed.headers, secret),
      refusedWith('invalid_webhook_signature'),
    );
    const otherSecret = `whsec_${btoa('another secret of 32 bytes......')}`;
    await assert.rejects(
      verifyWebhook(completed.body, completed.headers, otherSecret),
      refusedWith('invalid_webhook_signature'),
    );
    const otherId = { ...completed.headers, 'webhook-id': 'msg_someoneelse' };
    await assert.rejects(
      verifyWebhook(completed.body, otherId, secret),
      refusedWith('invalid_webhook_signature'),
    );
    const { 'webhook-signature': _dropped, ...unsigned } = completed.headers;
    await assert.rejects(
      verifyWebhook(completed.body, unsigned, secret),
      refusedWith('missing_webhook_headers'),
    );
    await assert.rejects(
      verifyWebhook(completed.body, completed.headers, 'whsec_'),
      refusedWith('invalid_webhook_secret'),
    );
  });

  it('refuses timestamps more than five minutes away, and a moved timestamp', async () => {
    const sent = timestampOf(completed) * 1000;
    await verifyWebhook(completed.body, completed.headers, secret, { now: sent + 299_000 });
    await assert.rejects(
      verifyWebhook(completed.body, completed.headers, secret, { now: sent + 301_000 }),
      refusedWith('webhook_timestamp_out_of_range'),
    );
    await assert.rejects(
      verifyWebhook(completed.body, completed.headers, secret, { now: sent - 301_000 }),
      refusedWith('webhook_timestamp_out_of_range'),
    );
    await verifyWebhook(completed.body, completed.headers, secret, {
      now: sent + 3_000_000,
      toleranceSeconds: 3600,
    });
    // Moving the timestamp into the window breaks the signature, which covers it.
    const moved = { ...completed.headers, 'webhook-timestamp': String(timestampOf(completed) + 1) };
    await assert.rejects(
      verifyWebhook(completed.body, moved, secret),
      refusedWith('invalid_webhook_signature'),
    );
    const garbled = { ...completed.headers, 'webhook-timestamp': 'yesterday' };
    await assert.rejects(
      verifyWebhook(completed.body, garbled, secret),
      refusedWith('invalid_webhook_timestamp'),
    );
  });

  it('accepts either secret while a rotation overlaps', async () => {
    const rotated = (await server.cli(['webhooks', 'rotate-secret'])).trim();
    assert.notEqual(rotated, secret);
    // A server signs with an account's secrets read up to a second before (docs/api.md, "rotate-secret"): the
    // redelivery is asked for once that second has passed since the last read, which on a slow machine it has.
    await delay(Math.max(0, secretsReadBefore + SECRETS_READ_EVERY_MS - Date.now()));
    const task = completedTaskId(completed);
    const before = receiver.received.length;
    const redelivered = await client.redeliver(task);
    assert.equal(redelivered.task_id, task);
    assert.equal(redelivered.event, 'task.completed');
    const again = await receiver.waitFor((received) => receiver.received.indexOf(received) >= before);
    const signatures = String(again.headers['webhook-signature']).split(' ');
    assert.equal(signatures.length, 2, 'signed with the new secret and the old one');
    assert.equal((await verifyWebhook(again.body, again.headers, secret)).id, task);
    assert.equal((await verifyWebhook(again.body, again.headers, rotated)).id, task);
    assert.equal((await verifyWebhook(again.body, again.headers, ['whsec_bm9wZQ==', rotated])).id, task);

    // The log has every message: processing, completed, and the one sent again, which arrived.
    assert.equal(again.headers['webhook-id'], redelivered.id);
    const log = await client.listDeliveries(task);
    assert.deepEqual(
      log.map((delivery) => delivery.event),
      ['task.processing', 'task.completed', 'task.completed'],
    );
    assert.ok(
      log.some((delivery) => delivery.id === redelivered.id),
      'the redelivery is in the log',
    );
    assert.ok(log.slice(0, 2).every((delivery) => delivery.status === 'succeeded'));
    assert.equal(log[1]?.attempts[0]?.http_status, 204);
  });
});

function completedTaskId(received: Received): string {
  return (JSON.parse(new TextDecoder().decode(received.body)) as { id: string }).id;
}

describe('verifyWebhook on a message signed here (no server)', () => {
  const secret = `whsec_${btoa('a signing secret of thirty-two b')}`;
  const body = '{"id":"task-unified-x","status":"processing", "progress":40}';
  const id = 'msg_local';

  async function signedHeaders(payload: string, timestamp: number): Promise<Record<string, string>> {
    const key = await crypto.subtle.importKey(
      'raw',
      Uint8Array.from(atob(secret.slice('whsec_'.length)), (c) => c.charCodeAt(0)),
      { name: 'HMAC', hash: 'SHA-256' },
      false,
      ['sign'],
    );
    const mac = await crypto.subtle.sign(
      'HMAC',
      key,
      new TextEncoder().encode(`${id}.${timestamp}.${payload}`),
    );
    const signature = btoa(String.fromCharCode(...new Uint8Array(mac)));
    return {
      'webhook-id': id,
      'webhook-timestamp': String(timestamp),
      // Another version's signature and a stray space first: only `v1,` entries count.
      'webhook-signature': `v2,AAAA  v1,${btoa('not it')} v1,${signature}`,
    };
  }

  it('takes the raw bytes in any view, from any realm, and refuses the body serialised again', async () => {
    const now = Math.floor(Date.now() / 1000);
    const headers = await signedHeaders(body, now);
    const bytes = new TextEncoder().encode(body);
    assert.equal((await verifyWebhook(body, headers, secret)).id, 'task-unified-x');
    assert.equal((await verifyWebhook(bytes.buffer, headers, secret)).id, 'task-unified-x');
    assert.equal((await verifyWebhook(Buffer.from(body), headers, secret)).id, 'task-unified-x');
    // A view into a larger buffer: only its own bytes are the body.
    const padded = new Uint8Array(bytes.length + 8);
    padded.set(bytes, 4);
    assert.equal(
      (await verifyWebhook(padded.subarray(4, 4 + bytes.length), headers, secret)).id,
      'task-unified-x',
    );
    // Bytes made in another realm (a vm context, as some test runners and sandboxes use) are bytes too.
    const foreign = runInNewContext('new Uint8Array(length)', { length: bytes.length }) as Uint8Array;
    foreign.set(bytes);
    assert.equal((await verifyWebhook(foreign, headers, secret)).id, 'task-unified-x');

    await assert.rejects(
      verifyWebhook(JSON.stringify(JSON.parse(body)), headers, secret),
      refusedWith('invalid_webhook_signature'),
    );
    await assert.rejects(
      verifyWebhook(JSON.parse(body) as string, headers, secret),
      (error: unknown) => error instanceof TypeError && /raw body/.test(error.message),
    );
  });

  it('refuses a timestamp too far either way, and a message signed with no v1 signature', async () => {
    const now = Math.floor(Date.now() / 1000);
    for (const offset of [-301, 301]) {
      await assert.rejects(
        verifyWebhook(body, await signedHeaders(body, now + offset), secret),
        refusedWith('webhook_timestamp_out_of_range'),
      );
    }
    const headers = { ...(await signedHeaders(body, now)), 'webhook-signature': 'v1a,xyz v2,abc' };
    await assert.rejects(verifyWebhook(body, headers, secret), refusedWith('invalid_webhook_signature'));
  });
});
