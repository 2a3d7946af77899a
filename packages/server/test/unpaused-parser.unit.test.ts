import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { Agent, request } from 'undici';
import { ReaderTooSlowError, unpausedParser } from '../src/outbound/unpaused-parser.js';

const BODY = randomBytes(4 * 1024 * 1024);
let server: Server;
let url: string;
/** Resolves when the server has handed the whole answer to the connection and closed it. */
let sent: Promise<void>;

before(async () => {
  server = createServer((_request, response) => {
    sent = new Promise((resolve) => response.on('finish', resolve));
    response.writeHead(200, { 'content-length': BODY.length, connection: 'close' }).end(BODY);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
});

after(() => new Promise<void>((resolve) => server.close(() => resolve())));

describe('unpausedParser', () => {
  it('hands on everything a paused reader was not ready for, in order, when it reads again', async () => {
    const agent = new Agent().compose(unpausedParser());
    try {
      const response = await request(url, { dispatcher: agent });
      // Read only once the server has sent it all and closed: the reader's pause held the rest back meanwhile.
      await once(response.body, 'readable');
      await sent;
      const chunks: Buffer[] = [];
      for await (const chunk of response.body) chunks.push(chunk as Buffer);
      assert.ok(Buffer.concat(chunks).equals(BODY));
    } finally {
      await agent.close();
    }
  });

  it('aborts the call when more than its limit waits for a reader that does not read', async () => {
    const agent = new Agent().compose(unpausedParser(1024 * 1024));
    try {
      const response = await request(url, { dispatcher: agent });
      const [error] = await once(response.body, 'error');
      assert.ok(error instanceof ReaderTooSlowError, String(error));
      assert.equal(error.message, 'the answer came faster than it could be taken: more than 1 MB waiting');
    } finally {
      await agent.close();
    }
  });
});
