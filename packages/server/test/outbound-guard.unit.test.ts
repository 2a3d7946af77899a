import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { Agent, buildConnector, type Dispatcher, request } from 'undici';
import { isPublicAddress } from '../src/outbound/address-policy.js';
import {
  createGuardedDispatcher,
  guardConnector,
  OutboundBlockedError,
} from '../src/outbound/guarded-dispatcher.js';

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
    '0.1.2.3',
    '100.127.255.254',
    '192.0.2.1',
    '198.51.100.7',
    '203.0.113.9',
    '240.0.0.1',
    '192.88.99.1',
    '255.255.255.255',
    '224.0.0.1',
    '::',
    '::1',
    '::ffff:127.0.0.1',
    '::ffff:10.0.0.1',
    '::ffff:169.254.169.254',
    '::ffff:a9fe:a9fe',
    '::ffff:0.0.0.0',
    'fc00::1',
    'fec0::1',
    '100::1',
    '64:ff9b::808:808',
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
  for (const address of [
    '8.8.8.8',
    '1.1.1.1',
    '93.184.215.14',
    '100.128.0.1',
    '172.32.0.1',
    '2606:4700::1111',
    '2001:4860:4860::8888',
    '::ffff:8.8.8.8',
    '::ffff:808:808',
  ]) {
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

  async function blockedOn(
    url: string,
    dispatcher: Dispatcher = createGuardedDispatcher({ allowPrivateNetworks: false }),
  ): Promise<OutboundBlockedError> {
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
    assert.match(
      error.message,
      /^address 127\.0\.0\.1 is not public \(.*VIDEOGEN_ALLOW_PRIVATE_NETWORKS=true\)$/,
    );
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

  it('judges the address actually connected to, whatever the lookup said', async () => {
    // No pre-connect filtering here: a connector that resolves `localhost` freely stands in for a DNS answer
    // that changed between lookup and connect. The connection is made, then refused on its remote address.
    const before = connections;
    const dispatcher = new Agent({ connect: guardConnector(buildConnector({})) });
    const error = await blockedOn(`http://localhost:${port}/`, dispatcher);
    assert.equal(error.address, '127.0.0.1');
    assert.match(error.message, /^address 127\.0\.0\.1 \(localhost\) is not public \(.*\)$/);
    assert.ok(connections > before, 'the connection was made before it was judged');
  });

  it('lets a guarded connector through to a public address', async () => {
    // The same wrapper around a connector that reports a public remote address passes the socket on.
    const connect = guardConnector((options, callback) =>
      buildConnector({})(options, (error, socket) => {
        if (error || !socket) return callback(error ?? new Error('no socket'), null);
        Object.defineProperty(socket, 'remoteAddress', { value: '8.8.8.8' });
        callback(null, socket);
      }),
    );
    const dispatcher = new Agent({ connect });
    try {
      const response = await request(`http://localhost:${port}/`, { dispatcher });
      assert.equal(await response.body.text(), 'ok');
    } finally {
      await dispatcher.close();
    }
  });

  it('refuses private and metadata literals without connecting', async () => {
    for (const host of ['10.0.0.1', '169.254.169.254', '100.64.0.1', '[fd00::1]', '0.0.0.0']) {
      const error = await blockedOn(`http://${host}/`);
      assert.equal(error.address, host.replace(/^\[|\]$/g, ''));
    }
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
