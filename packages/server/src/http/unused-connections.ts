/**
 * Connections that never sent a byte, ended when the server starts closing. `server.close()` ends the idle
 * connections, but Node (before nodejs/node#63470) counts one that has sent nothing as receiving a request,
 * and the close stops the headers-timeout check that would end it: a client's spare connection (undici opens
 * one when it drops a stream it stopped reading; browsers open speculative ones) held a shutdown up for the
 * keep-alive timeout, over a minute.
 */
import type { Socket } from 'node:net';
import type { FastifyInstance } from 'fastify';

export function endUnusedConnectionsOnClose(app: FastifyInstance): void {
  const open = new Set<Socket>();
  app.server.on('connection', (socket: Socket) => {
    open.add(socket);
    socket.once('close', () => open.delete(socket));
  });
  app.addHook('preClose', (done) => {
    for (const socket of open) if (socket.bytesRead === 0) socket.destroy();
    done();
  });
}
