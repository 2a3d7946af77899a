/**
 * A TCP proxy on loopback in front of a server (PostgreSQL) that a test can cut: `cut()` resets every
 * connection through it and refuses new ones, as a database failover or a network partition does to its
 * clients; `restore()` lets connections through again.
 */
import { createConnection, createServer, type Server, type Socket } from 'node:net';

export class CuttableTcpProxy {
  readonly #server: Server;
  readonly #sockets = new Set<Socket>();
  #cut = false;

  private constructor(target: { readonly host: string; readonly port: number }) {
    this.#server = createServer((client) => {
      if (this.#cut) {
        client.resetAndDestroy();
        return;
      }
      const upstream = createConnection(target);
      for (const socket of [client, upstream]) {
        this.#sockets.add(socket);
        socket.on('close', () => this.#sockets.delete(socket));
        socket.on('error', () => {
          client.destroy();
          upstream.destroy();
        });
      }
      client.pipe(upstream);
      upstream.pipe(client);
    });
  }

  static async start(target: { readonly host: string; readonly port: number }): Promise<CuttableTcpProxy> {
    const proxy = new CuttableTcpProxy(target);
    await new Promise<void>((resolve) => proxy.#server.listen(0, '127.0.0.1', resolve));
    return proxy;
  }

  get port(): number {
    const address = this.#server.address();
    if (!address || typeof address === 'string') throw new Error('not listening');
    return address.port;
  }

  /** Resets every connection and refuses new ones until `restore()`. */
  cut(): void {
    this.#cut = true;
    for (const socket of this.#sockets) socket.resetAndDestroy();
  }

  restore(): void {
    this.#cut = false;
  }

  async close(): Promise<void> {
    this.cut();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }
}
