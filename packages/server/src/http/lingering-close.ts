/**
 * Lingering close, as nginx does it. An answer given while the client is still sending its body (a `413` judged on
 * `Content-Length`, a `415` refused before the body is read, a `503` while draining) says `Connection: close`, and
 * Node closes the socket as soon as that answer is written. A socket closed with data unread, or that data reaches
 * after it closed, makes the kernel send a reset, and a reset discards what the client had not yet read: the
 * client, still writing, sees `EPIPE` or `ECONNRESET` instead of the answer.
 *
 * So once such an answer is written, the connection is half-closed (the client reads the end of the answer) and
 * the rest of the body is read and thrown away; the socket is closed when the body has ended or the client closed
 * its end, or once `bytes` were read or `ms` have passed. A client that reads the answer stops sending and closes
 * first. An early answer that keeps the connection open (a `404`) has the rest of its body read within the same
 * bounds, in place of Node's unbounded read.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyInstance } from 'fastify';

export interface LingerLimits {
  /** The longest a closing connection is read from after its answer. */
  readonly ms: number;
  /** The most a closing connection is read after its answer. */
  readonly bytes: number;
}

/**
 * 5 s in all (nginx waits up to 5 s for each read, 30 s in all): a client's reaction to an answer takes a round
 * trip, far less. 64 MiB: what a client sending at 1 Gbit/s sends in half a second, so that a client is bound by the
 * time rather than the bytes.
 */
export const LINGER_LIMITS: LingerLimits = { ms: 5_000, bytes: 64 * 1024 * 1024 };

export function lingerBeforeClosing(app: FastifyInstance, limits: LingerLimits = LINGER_LIMITS): void {
  /** Connections whose latest answer was written before its request's body arrived, while the rest arrives. */
  const discarding = new WeakSet<Socket>();
  /** Connections closing once that rest has arrived. */
  const closing = new WeakSet<Socket>();

  const discardRest = (request: IncomingMessage) => {
    const { socket } = request;
    discarding.add(socket);
    const timer = setTimeout(() => socket.destroy(), limits.ms);
    socket.once('close', () => clearTimeout(timer));
    let left = limits.bytes;
    request.on('data', (chunk: Buffer) => {
      left -= chunk.length;
      if (left < 0) socket.destroy();
    });
    request.once('end', () => {
      clearTimeout(timer);
      discarding.delete(socket);
      if (closing.has(socket)) socket.destroy();
    });
    request.resume();
  };

  app.server.on('request', (request: IncomingMessage, response: ServerResponse) => {
    // Ahead of Node's own listener, which would read the rest of the body to its end, however long.
    response.prependOnceListener('finish', () => {
      if (!request.complete) discardRest(request);
    });
  });
  app.server.on('connection', (socket: Socket) => {
    const destroySoon = socket.destroySoon;
    // Node's HTTP server calls this once an answer that closes the connection is written, and only then.
    socket.destroySoon = () => {
      if (!discarding.has(socket)) {
        destroySoon.call(socket);
        return;
      }
      closing.add(socket);
      socket.end();
    };
  });
  // RFC 9112 §9.6: no request after an answer that closes the connection is served, though Node's parser, reading
  // the rest of the body, also parses one the client sent after it. It gets no answer: the connection closes.
  app.addHook('onRequest', (request, reply, done) => {
    if (!closing.has(request.raw.socket)) {
      done();
      return;
    }
    reply.hijack();
  });
}
