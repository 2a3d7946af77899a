/**
 * A callback receiver on 127.0.0.1 for tests: records every request and answers as `respond` says, which can
 * delay or never answer. Signatures are checked by the tests with the `standardwebhooks` library.
 */
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ReceivedWebhook {
  readonly path: string;
  readonly headers: IncomingHttpHeaders;
  readonly body: string;
  /** `performance.now()` when the body had arrived. */
  readonly at: number;
}

export interface Reply {
  readonly status: number;
  readonly headers?: Record<string, string>;
  /** Never answer (until the receiver closes). */
  readonly hang?: boolean;
}

export type Respond = (request: ReceivedWebhook, index: number) => Reply;

export interface WebhookReceiver {
  /** Base URL, `http://127.0.0.1:PORT`. */
  readonly url: string;
  readonly received: ReceivedWebhook[];
  /** Requests being answered right now (hanging ones included). */
  readonly open: number;
  /** The most requests that were open at once. */
  readonly peakOpen: number;
  /** Resolves once `count` requests have arrived; rejects after `timeoutMs` (default 30 s: only a failure waits it out). */
  waitFor(count: number, timeoutMs?: number): Promise<ReceivedWebhook[]>;
  close(): Promise<void>;
}

export async function startWebhookReceiver(
  respond: Respond = () => ({ status: 200 }),
): Promise<WebhookReceiver> {
  const received: ReceivedWebhook[] = [];
  const waiters = new Set<() => void>();
  let open = 0;
  let peakOpen = 0;
  const server = createServer((request, response) => {
    open++;
    peakOpen = Math.max(peakOpen, open);
    response.on('close', () => open--);
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const webhook: ReceivedWebhook = {
        path: request.url ?? '',
        headers: request.headers,
        body: Buffer.concat(chunks).toString('utf8'),
        at: performance.now(),
      };
      received.push(webhook);
      const reply = respond(webhook, received.length - 1);
      for (const wake of [...waiters]) wake();
      if (reply.hang) return;
      response.writeHead(reply.status, reply.headers).end('ok');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    received,
    get open() {
      return open;
    },
    get peakOpen() {
      return peakOpen;
    },
    waitFor(count, timeoutMs = 30_000) {
      return new Promise((resolve, reject) => {
        const check = () => {
          if (received.length < count) return;
          cleanUp();
          resolve(received.slice(0, count));
        };
        const timer = setTimeout(() => {
          cleanUp();
          reject(new Error(`expected ${count} webhooks within ${timeoutMs} ms, got ${received.length}`));
        }, timeoutMs);
        const cleanUp = () => {
          clearTimeout(timer);
          waiters.delete(check);
        };
        waiters.add(check);
        check();
      });
    },
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
