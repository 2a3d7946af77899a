/**
 * `endConnectionsOnClose`: a Fastify app's close ends every connection as soon as it has nothing left to
 * answer. Keep-alive of an hour throughout: only the close can end a connection within a test's time limit.
 */
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { type AddressInfo, connect, type Socket } from 'node:net';
import { PassThrough } from 'node:stream';
import { afterEach, describe, it } from 'node:test';
import Fastify, { type FastifyInstance } from 'fastify';
import { endConnectionsOnClose } from '../src/http/connections-on-close.js';

const HOUR_MS = 3_600_000;

async function listening(app: FastifyInstance): Promise<{ port: number }> {
  await app.listen({ host: '127.0.0.1', port: 0 });
  return { port: (app.server.address() as AddressInfo).port };
}

function client(port: number, signal: AbortSignal): { socket: Socket; received: () => string } {
  const socket = connect(port, '127.0.0.1');
  const chunks: Buffer[] = [];
  socket.on('data', (chunk: Buffer) => chunks.push(chunk));
  socket.on('error', () => undefined);
  signal.addEventListener('abort', () => socket.destroy());
  return { socket, received: () => Buffer.concat(chunks).toString('utf8') };
}

describe('endConnectionsOnClose', () => {
  let app: FastifyInstance;
  afterEach(() => app.server.closeAllConnections());

  it('ends a kept-alive connection whose answer, begun before the close, finishes after it', {
    timeout: 60_000,
  }, async (t) => {
    app = Fastify({ keepAliveTimeout: HOUR_MS, forceCloseConnections: 'idle' });
    endConnectionsOnClose(app);
    const body = new PassThrough();
    const started = new Promise<void>((resolve) => {
      app.get('/video', async (_request, reply) => {
        reply.header('content-length', 10);
        body.write('12345');
        resolve();
        return reply.send(body);
      });
    });
    const { port } = await listening(app);
    const { socket, received } = client(port, t.signal);
    socket.write('GET /video HTTP/1.1\r\nHost: x\r\n\r\n');
    await started;
    // The answer finishes once Node's own close has passed over the connection (it ends those idle then).
    const serverClose = app.server.close.bind(app.server);
    app.server.close = (callback) => {
      const server = serverClose(callback);
      body.end('67890');
      return server;
    };
    const ended = once(socket, 'close');
    await app.close();
    await ended;
    const [head = '', sent = ''] = received().split('\r\n\r\n');
    assert.match(head, /^HTTP\/1\.1 200 /);
    assert.match(head, /\r\nconnection: keep-alive\r\n/i, 'the answer itself did not close it');
    assert.equal(sent, '1234567890', 'the answer was sent whole');
  });

  it('answers a request pipelined behind the one in progress before it ends the connection', {
    timeout: 60_000,
  }, async (t) => {
    app = Fastify({ keepAliveTimeout: HOUR_MS, forceCloseConnections: 'idle' });
    endConnectionsOnClose(app);
    let release: () => void = () => undefined;
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    const started = new Promise<void>((resolve) => {
      app.get('/slow', async () => {
        resolve();
        await held;
        return 'first';
      });
    });
    app.get('/fast', async () => 'second');
    const { port } = await listening(app);
    const { socket, received } = client(port, t.signal);
    const parsed = new Promise<void>((resolve) => {
      let requests = 0;
      app.server.on('request', () => {
        if (++requests === 2) resolve();
      });
    });
    socket.write('GET /slow HTTP/1.1\r\nHost: x\r\n\r\nGET /fast HTTP/1.1\r\nHost: x\r\n\r\n');
    await started;
    await parsed;
    const serverClose = app.server.close.bind(app.server);
    app.server.close = (callback) => {
      const server = serverClose(callback);
      release();
      return server;
    };
    const ended = once(socket, 'close');
    await app.close();
    await ended;
    const answers = received().split(/(?=HTTP\/1\.1 )/);
    assert.equal(answers.length, 2, received());
    assert.match(answers[0] ?? '', /\r\n\r\nfirst$/);
    assert.match(answers[1] ?? '', /\r\n\r\nsecond$/);
  });

  it('ends a connection that sent nothing at once', { timeout: 60_000 }, async (t) => {
    app = Fastify({ keepAliveTimeout: HOUR_MS, forceCloseConnections: 'idle' });
    endConnectionsOnClose(app);
    const { port } = await listening(app);
    const accepted = once(app.server, 'connection');
    const { socket, received } = client(port, t.signal);
    await accepted;
    const ended = once(socket, 'close');
    await app.close();
    await ended;
    assert.equal(received(), '');
  });
});
