/**
 * An undici dispatcher that connects only to public addresses.
 *
 * Two layers: before connecting, IP-literal hosts are judged directly and DNS answers are filtered, so no
 * packet (not even a TCP SYN or TLS ClientHello) reaches a private address and refusals cannot be used to
 * scan ports; after connecting, the socket's actual remote address is judged again, which is the
 * authoritative check covering IP literals, every redirect hop and DNS answers that change between lookup
 * and connect (rebinding).
 */
import { lookup as dnsLookup, type LookupAddress, type LookupOptions } from 'node:dns';
import { isIP, type LookupFunction, type Socket } from 'node:net';
import { Agent, buildConnector, type Dispatcher } from 'undici';
import { isPublicAddress } from './address-policy.js';

export class OutboundBlockedError extends Error {
  readonly address: string;

  constructor(host: string, address: string) {
    super(`address ${address}${host && host !== address ? ` (${host})` : ''} is not public`);
    this.name = 'OutboundBlockedError';
    this.address = address;
  }
}

export interface GuardedDispatcherOptions {
  readonly allowPrivateNetworks: boolean;
  readonly connectTimeoutMs?: number;
}

/** A DNS lookup that only ever returns public addresses; refuses when none are. */
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

export function createGuardedDispatcher(options: GuardedDispatcherOptions): Dispatcher {
  const timeout = options.connectTimeoutMs ?? 10_000;
  if (options.allowPrivateNetworks) return new Agent({ connect: buildConnector({ timeout }) });
  const connect = buildConnector({ timeout, lookup: publicLookup });
  return new Agent({
    connect(connectOptions, callback) {
      const literal = unbracket(connectOptions.hostname);
      if (isIP(literal) && !isPublicAddress(literal)) {
        callback(new OutboundBlockedError(literal, literal), null);
        return;
      }
      connect(connectOptions, (error, socket) => {
        if (error || !socket) {
          callback(error ?? new Error('connection failed'), null);
          return;
        }
        const address = (socket as Socket).remoteAddress ?? '';
        if (!isPublicAddress(address)) {
          socket.destroy();
          callback(new OutboundBlockedError(literal, address), null);
          return;
        }
        callback(null, socket);
      });
    },
  });
}
