/**
 * A server that answers HTTP the way quirky and hostile servers do, byte by byte on a raw TCP socket, so that
 * nothing in Node's own HTTP server tidies the answer up. The request's path chooses the misbehaviour.
 */
import { createServer, type Server, type Socket } from 'node:net';

export type Misbehaviour =
  /** HTTP/1.0 with a Content-Length, the connection closed after the answer (`python3 -m http.server`). */
  | 'http10-close'
  /** HTTP/1.0 with no Content-Length: the body ends where the connection does. */
  | 'http10-eof'
  /** A Content-Length of the whole body, half of it sent, then the connection ended. */
  | 'cut-short'
  /** A byte at a time, every 20 ms, for far longer than any test waits. */
  | 'drip'
  /** A status line that is not HTTP. */
  | 'garbage-status'
  /** Part of the body, then a TCP reset. */
  | 'reset-mid-body'
  /** A chunked body whose second chunk's size is not hexadecimal. */
  | 'bad-chunk'
  /** A redirect to itself, for ever. */
  | 'redirect-loop';

export const MISBEHAVIOURS: readonly Misbehaviour[] = [
  'http10-close',
  'http10-eof',
  'cut-short',
  'drip',
  'garbage-status',
  'reset-mid-body',
  'bad-chunk',
  'redirect-loop',
];

export interface MisbehavingServer {
  /** `http://127.0.0.1:<port>`; `${url}/http10-close` is a URL. */
  readonly url: string;
  close(): Promise<void>;
}

function header(lines: string[]): Buffer {
  return Buffer.from(`${lines.join('\r\n')}\r\n\r\n`, 'latin1');
}

function answer(socket: Socket, path: string, body: Buffer): void {
  const kind = path.slice(1) as Misbehaviour;
  switch (kind) {
    case 'http10-close':
      socket.end(
        Buffer.concat([
          header(['HTTP/1.0 200 OK', 'Content-Type: video/mp4', `Content-Length: ${body.length}`]),
          body,
        ]),
      );
      return;
    case 'http10-eof':
      socket.end(Buffer.concat([header(['HTTP/1.0 200 OK', 'Content-Type: video/mp4']), body]));
      return;
    case 'cut-short':
      socket.end(
        Buffer.concat([
          header(['HTTP/1.1 200 OK', 'Content-Type: video/mp4', `Content-Length: ${body.length}`]),
          body.subarray(0, body.length >> 1),
        ]),
      );
      return;
    case 'drip': {
      socket.write(header(['HTTP/1.1 200 OK', 'Content-Type: video/mp4', `Content-Length: ${body.length}`]));
      let sent = 0;
      const timer = setInterval(() => {
        if (sent < body.length && !socket.destroyed) socket.write(body.subarray(sent, ++sent));
      }, 20);
      socket.on('close', () => clearInterval(timer));
      return;
    }
    case 'garbage-status':
      socket.end('SPAM/9 two hundred-ish\r\nno: colon here\r\n\r\nwhatever');
      return;
    case 'reset-mid-body':
      socket.write(
        Buffer.concat([
          header(['HTTP/1.1 200 OK', 'Content-Type: video/mp4', `Content-Length: ${body.length}`]),
          body.subarray(0, body.length >> 2),
        ]),
        () => socket.resetAndDestroy(),
      );
      return;
    case 'bad-chunk':
      socket.end(
        Buffer.concat([
          header(['HTTP/1.1 200 OK', 'Content-Type: video/mp4', 'Transfer-Encoding: chunked']),
          Buffer.from(`${(1024).toString(16)}\r\n`),
          body.subarray(0, 1024),
          Buffer.from('\r\nZZ\r\nnot a chunk\r\n0\r\n\r\n'),
        ]),
      );
      return;
    case 'redirect-loop':
      socket.write(header(['HTTP/1.1 302 Found', `Location: ${path}`, 'Content-Length: 0']));
      return;
    default:
      socket.end(header(['HTTP/1.1 404 Not Found', 'Content-Length: 0', 'Connection: close']));
  }
}

/** Listens on 127.0.0.1 at a port of its own; every answer's body is `body`. */
export async function startMisbehavingServer(body: Buffer): Promise<MisbehavingServer> {
  const sockets = new Set<Socket>();
  const server: Server = createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => {});
    let received = '';
    socket.on('data', (data) => {
      received += data.toString('latin1');
      for (let end = received.indexOf('\r\n\r\n'); end >= 0; end = received.indexOf('\r\n\r\n')) {
        const path = received.slice(0, end).split(' ')[1] ?? '/';
        received = received.slice(end + 4);
        answer(socket, path, body);
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('no port');
  return {
    url: `http://127.0.0.1:${address.port}`,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
