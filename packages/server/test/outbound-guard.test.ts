import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { request } from 'undici';
import { isPublicAddress } from '../src/outbound/address-policy.js';
import { createGuardedDispatcher, OutboundBlockedError } from '../src/outbound/guarded-dispatcher.js';

describe('isPublicAddress', () => {
  const refused = [
    '127.0.0.1',
    '127.8.9.10',
    '10.1.2.3',
    '172.16.0.1',
    '192.168.0.1',
    '169.254.169.254',
    '100.64.0.1',
    '0.0.0.0',
    '255.255.255.255',
    '224.0.0.1',
    '::',
    '::1',
    '::ffff:127.0.0.1',
    '::ffff:10.0.0.1',
    'fd00::1',
    'fe80::1',
    'ff02::1',
    '2002:7f00:1::1',
    '2001::1',
    '64:ff9b::7f00:1',
    '::7f00:1',
    '4000::1',
    '2001:db8::1',
    '192.0.0.1',
    '198.18.0.1',
    'fe80::1%eth0',
    'not an address',
    '',
  ];
  for (const address of refused) {
    it(`refuses ${address || '(empty)'}`, () => assert.equal(isPublicAddress(address), false));
  }
  for (const address of ['8.8.8.8', '1.1.1.1', '2606:4700::1111', '::ffff:8.8.8.8']) {
    it(`allows ${address}`, () => assert.equal(isPublicAddress(address), true));
  }
});

describe('guarded dispatcher', () => {
  let server: Server;
  let port: number;
  let connections = 0;
  before(async () => {
    server = createServer((_request, response) => response.end('ok'));
    server.on('connection', () => connections++);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });
  after(() => new Promise<void>((resolve) => server.close(() => resolve())));

  async function blockedOn(url: string): Promise<OutboundBlockedError> {
    const dispatcher = createGuardedDispatcher({ allowPrivateNetworks: false });
    try {
      await request(url, { dispatcher });
    } catch (error) {
      let current: unknown = error;
      while (current instanceof Error) {
        if (current instanceof OutboundBlockedError) return current;
        current = current.cause;
      }
      throw error;
    } finally {
      await dispatcher.close();
    }
    throw new Error(`${url} was not blocked`);
  }

  it('refuses an IP literal on the loopback address without connecting', async () => {
    const before = connections;
    const error = await blockedOn(`http://127.0.0.1:${port}/`);
    assert.equal(error.address, '127.0.0.1');
    assert.match(error.message, /^address 127\.0\.0\.1 is not public$/);
    assert.equal(connections, before, 'no connection reached the server');
  });

  it('refuses IPv6 and IPv4-mapped loopback literals', async () => {
    assert.equal((await blockedOn(`http://[::1]:${port}/`)).address, '::1');
    assert.equal((await blockedOn(`http://[::ffff:127.0.0.1]:${port}/`)).address, '::ffff:7f00:1');
  });

  it('refuses a host name that resolves to the loopback address, before connecting', async () => {
    const before = connections;
    const error = await blockedOn(`http://localhost:${port}/`);
    assert.ok(error.address === '127.0.0.1' || error.address === '::1', error.address);
    assert.match(error.message, /localhost/);
    assert.equal(connections, before, 'no connection reached the server');
  });

  it('connects when private networks are allowed', async () => {
    const dispatcher = createGuardedDispatcher({ allowPrivateNetworks: true });
    try {
      const response = await request(`http://127.0.0.1:${port}/`, { dispatcher });
      assert.equal(await response.body.text(), 'ok');
    } finally {
      await dispatcher.close();
    }
  });
});
