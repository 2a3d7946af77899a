/** The HTTP plumbing every fake server shares: a loopback server on a free port, request bodies, answers. */
import { readFile } from 'node:fs/promises';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** An HTTP server on 127.0.0.1, at a port the system chooses, whose requests `handle` answers. */
export class LoopbackServer {
  /** The server itself, for events beyond requests (a websocket upgrade). */
  readonly server: Server;

  /** `handle` answers its own failures: a rejection it leaves is the test's failure. */
  constructor(handle: (req: IncomingMessage, res: ServerResponse) => Promise<void>) {
    this.server = createServer((req, res) => {
      void handle(req, res);
    });
  }

  listen(): Promise<void> {
    return new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
  }

  /** `http://127.0.0.1:<port>`, once listening. */
  get url(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  /** Closes it, cutting the connections clients keep alive, which would otherwise hold it open. */
  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

export async function readBody(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/** `body` as JSON; `headers` may name another content type. */
export function sendJson(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Readonly<Record<string, string>> = {},
): void {
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify(body));
}

/** A made video, whole, with its length. */
export async function sendVideoFile(res: ServerResponse, path: string): Promise<void> {
  await sendFile(res, path, 'video/mp4');
}

export async function sendFile(res: ServerResponse, path: string, type: string): Promise<void> {
  const bytes = await readFile(path);
  res.writeHead(200, { 'content-type': type, 'content-length': String(bytes.length) });
  res.end(bytes);
}
