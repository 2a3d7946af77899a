/**
 * Lingering close (http/lingering-close.ts): an answer given while the client is still sending its body reaches
 * the client, the rest of the body is read and thrown away within a bound of bytes and of time, and nothing sent
 * after it is served.
 */
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { mkdtemp, rm } from 'node:fs/promises';
import { type AddressInfo, connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, afterEach, before, describe, it } from 'node:test';
import Fastify, { type FastifyInstance } from 'fastify';
import { request } from 'undici';
import { type LingerLimits, lingerBeforeClosing } from '../src/http/lingering-close.js';
import type { ErrorBody } from './helpers/api.js';
import { type ServerProcess, serverEnv, startServer } from './helpers/server-process.js';

const HOUR_MS = 3_600_000;
const TEXT = { model: 'videogen-2.0-text-to-video', prompt: 'a paper boat' };

describe('a body over the limit, sent by a client that goes on sending', () => {
  // A server process of its own: a client in the server's process shares its event loop, which hides the race
  // (the server closing while the client still writes) that the lingering close is there for.
  let server: ServerProcess;
  let dataDir: string;
  let key: string;
  // 64 MB against the 20 MB default limit: the client is still writing when the answer comes.
  const body = Buffer.alloc(64_000_000, ' ');
  body.write(JSON.stringify(TEXT));

  before(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'videogen-linger-'));
    server = await startServer(serverEnv(dataDir));
    key = await server.firstKey();
  });
  after(async () => {
    await server.stop();
    await rm(dataDir, { recursive: true, force: true });
  });

  const url = () => `${server.url}/v1/videos/generations`;
  const headers = () => ({ authorization: `Bearer ${key}`, 'content-type': 'application/json' });

  function assertTooLarge(status: number, requestId: string | null, answer: unknown): void {
    assert.equal(status, 413, JSON.stringify(answer));
    const { error } = answer as ErrorBody;
    assert.equal(error.code, 'payload_too_large');
    assert.equal(error.type, 'invalid_request_error');
    assert.match(error.message, /20 MB/);
    assert.equal(error.request_id, requestId);
  }

  it('reads the 413 and its error body with fetch, every time', { timeout: 300_000 }, async () => {
    for (let i = 0; i < 20; i++) {
      const response = await fetch(url(), { method: 'POST', headers: headers(), body });
      assertTooLarge(response.status, response.headers.get('x-request-id'), await response.json());
    }
  });

  it("reads the 413 and its error body with undici's request, every time", { timeout: 300_000 }, async () => {
    for (let i = 0; i < 20; i++) {
      const response = await request(url(), { method: 'POST', headers: headers(), body });
      const requestId = response.headers['x-request-id'];
      assertTooLarge(
        response.statusCode,
        typeof requestId === 'string' ? requestId : null,
        await response.body.json(),
      );
    }
  });
});

describe('lingerBeforeClosing', () => {
  let app: FastifyInstance;
  afterEach(async () => {
    app.server.closeAllConnections();
    await app.close();
  });

  /**
   * An app that refuses bodies over 1 KB, `served` counting the requests its routes answered, and `closed` the
   * server's end of the first connection once closed.
   */
  async function refusingApp(limits: LingerLimits) {
    app = Fastify({ bodyLimit: 1024 });
    lingerBeforeClosing(app, limits);
    let served = 0;
    app.post('/', async () => {
      served++;
      return 'ok';
    });
    app.get('/', async () => {
      served++;
      return 'ok';
    });
    const connected = once(app.server, 'connection') as Promise<[Socket]>;
    await app.listen({ host: '127.0.0.1', port: 0 });
    // Half-open allowed: a client that goes on sending once the server has said it is done.
    const client = connect({
      port: (app.server.address() as AddressInfo).port,
      host: '127.0.0.1',
      allowHalfOpen: true,
    });
    client.on('error', () => undefined);
    let received = '';
    client.on('data', (chunk: Buffer) => {
      received += chunk.toString('latin1');
    });
    const [socket] = await connected;
    const closed = once(socket, 'close').then(() => socket.bytesRead);
    return { client, socket, closed, received: () => received, served: () => served };
  }

  function post(contentLength: number): string {
    return `POST / HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${contentLength}\r\n\r\n`;
  }

  it('answers, reads on, and closes once it has read `bytes` more', { timeout: 120_000 }, async () => {
    const total = 256 * 1024 * 1024;
    const { client, closed, received } = await refusingApp({ ms: HOUR_MS, bytes: 1024 * 1024 });
    client.write(post(total));
    const chunk = Buffer.alloc(64 * 1024, ' ');
    let sent = 0;
    const pump = () => {
      while (sent < total && client.writable) {
        sent += chunk.length;
        if (!client.write(chunk)) {
          client.once('drain', pump);
          return;
        }
      }
    };
    pump();
    const read = await closed;
    assert.match(received(), /^HTTP\/1\.1 413 /);
    assert.ok(read > 1024 * 1024, `read ${read} bytes: it read on after answering`);
    assert.ok(read < total / 2, `read ${read} bytes of ${total}: it stopped`);
  });

  it('closes a connection whose client stops sending once `ms` have passed', {
    timeout: 60_000,
  }, async () => {
    const { client, closed, received } = await refusingApp({ ms: 100, bytes: 1024 * 1024 * 1024 });
    client.write(`${post(1024 * 1024)}${' '.repeat(2048)}`);
    await closed;
    assert.match(received(), /^HTTP\/1\.1 413 /);
  });

  it('reads the rest of the body, then closes: a request sent after it is not served', {
    timeout: 60_000,
  }, async () => {
    const { client, closed, received, served } = await refusingApp({
      ms: HOUR_MS,
      bytes: 1024 * 1024 * 1024,
    });
    client.write(post(2048));
    await once(client, 'end');
    assert.match(received(), /^HTTP\/1\.1 413 [\s\S]*connection: close/i);
    client.write(`${' '.repeat(2048)}GET / HTTP/1.1\r\nHost: x\r\n\r\n`);
    const read = await closed;
    assert.ok(read >= Buffer.byteLength(post(2048)) + 2048, `read ${read} bytes: the whole body`);
    assert.equal(served(), 0);
    assert.equal(received().match(/HTTP\/1\.1 /g)?.length, 1, received());
  });
});
