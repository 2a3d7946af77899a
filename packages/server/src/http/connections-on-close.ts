/**
 * When the server starts closing, every connection is ended as soon as it has nothing left to answer, so that a
 * shutdown waits only for the answers in progress. Node's `server.close()` ends the connections idle at that
 * moment and leaves the rest to their keep-alive timeout (72 s here), which two kinds of connection hit:
 * - one that never sent a byte: Node (before nodejs/node#63470) counts it as receiving a request, and the close
 *   stops the headers-timeout check that would end it (undici opens such a spare connection when it drops a
 *   stream it stopped reading; browsers open speculative ones);
 * - one whose answer was still finishing: a client may hold the whole body before the server's response emits
 *   `finish`, and a close in between found the connection busy and then never ended it.
 */
import type { ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyInstance } from 'fastify';

export function endConnectionsOnClose(app: FastifyInstance): void {
  /** Each open connection with its latest answer. */
  const open = new Map<Socket, ServerResponse | undefined>();
  let closing = false;
  app.server.on('connection', (socket: Socket) => {
    open.set(socket, undefined);
    socket.once('close', () => open.delete(socket));
  });
  app.server.on('request', (_request, response: ServerResponse) => {
    const { socket } = response;
    if (!socket) return;
    open.set(socket, response);
    response.once('finish', () => {
      // A request pipelined behind this one was announced when it was parsed: it is answered first (Node
      // closes the connection after the drain's 503).
      if (closing && open.get(socket) === response) socket.end();
    });
  });
  app.addHook('preClose', (done) => {
    closing = true;
    for (const [socket, response] of open) {
      if (socket.bytesRead === 0) socket.destroy();
      else if (!response || response.writableFinished) socket.end();
    }
    done();
  });
}
