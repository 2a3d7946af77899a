/**
 * An undici dispatcher that connects only to public addresses (docs/decisions.md#outbound-requests), shared
 * by asset downloads and webhook delivery.
 *
 * The authoritative check is on the connection actually made: once a socket is connected, its remote address
 * is judged and the socket destroyed unless it is public. That covers IP literals, every redirect hop (each is
 * a new connection) and DNS answers that change between lookup and connect (rebinding). Two earlier checks
 * keep packets from ever reaching a private address (not even a TCP SYN or TLS ClientHello, so refusals cannot
 * be used to probe internal ports): IP-literal hosts are judged before connecting, and DNS answers are filtered
 * to public addresses.
 */
import { lookup as dnsLookup, type LookupAddress, type LookupOptions } from 'node:dns';
import { isIP, type LookupFunction } from 'node:net';
import { buildConnector, type Dispatcher } from 'undici';
import { isPublicAddress } from './address-policy.js';
import { createOutboundAgent } from './outbound-agent.js';

/** A refused outbound connection; found in the `cause` chain of the error undici rejects with. */
export class OutboundBlockedError extends Error {
  /** The address that was refused. */
  readonly address: string;

  constructor(host: string, address: string) {
    super(
      `address ${address}${host && host !== address ? ` (${host})` : ''} is not public` +
        ' (the server reaches only public addresses unless VIDEOGEN_ALLOW_PRIVATE_NETWORKS=true)',
    );
    this.name = 'OutboundBlockedError';
    this.address = address;
  }
}

export interface GuardedDispatcherOptions {
  /** `VIDEOGEN_ALLOW_PRIVATE_NETWORKS`: connect anywhere (local development and tests). */
  readonly allowPrivateNetworks: boolean;
  /** Time to establish a connection (TCP and TLS), default 10 s. */
  readonly connectTimeoutMs?: number;
}

export const DEFAULT_CONNECT_TIMEOUT_MS = 10_000;

/** A DNS lookup that only ever returns public addresses and fails when there are none. */
const publicLookup: LookupFunction = (hostname: string, options: LookupOptions, callback) => {
  dnsLookup(hostname, { ...options, all: true }, (error, addresses: LookupAddress[]) => {
    if (error) {
      callback(error, '');
      return;
    }
    const usable = addresses.filter((a) => isPublicAddress(a.address));
    const first = usable[0];
    if (!first) {
      callback(new OutboundBlockedError(hostname, addresses[0]?.address ?? 'unknown'), '');
      return;
    }
    if (options.all) callback(null, usable);
    else callback(null, first.address, first.family);
  });
};

function unbracket(hostname: string): string {
  return hostname.startsWith('[') && hostname.endsWith(']') ? hostname.slice(1, -1) : hostname;
}

/**
 * Wraps an undici connector so that it refuses non-public IP-literal hosts without connecting and destroys
 * any connection whose remote address is not public. `createGuardedDispatcher` uses it; exported so the
 * post-connect check can be tested on its own.
 */
export function guardConnector(connect: buildConnector.connector): buildConnector.connector {
  return (connectOptions, callback) => {
    const host = unbracket(connectOptions.hostname);
    if (isIP(host) && !isPublicAddress(host)) {
      callback(new OutboundBlockedError(host, host), null);
      return;
    }
    connect(connectOptions, (error, socket) => {
      if (error || !socket) {
        callback(error ?? new Error('connection failed'), null);
        return;
      }
      const address = socket.remoteAddress ?? '';
      if (!isPublicAddress(address)) {
        socket.destroy();
        callback(new OutboundBlockedError(host, address || 'unknown'), null);
        return;
      }
      callback(null, socket);
    });
  };
}

/** The dispatcher for every outbound request; close it on shutdown. */
export function createGuardedDispatcher(options: GuardedDispatcherOptions): Dispatcher {
  const timeout = options.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS;
  if (options.allowPrivateNetworks) return createOutboundAgent({ connect: buildConnector({ timeout }) });
  return createOutboundAgent({ connect: guardConnector(buildConnector({ timeout, lookup: publicLookup })) });
}
