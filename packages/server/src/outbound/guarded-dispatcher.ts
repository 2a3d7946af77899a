/**
 * An undici dispatcher that connects only to public addresses. The check runs on the socket's remote
 * address once connected, so IP literals, every redirect hop and DNS answers that change between lookup
 * and connect (rebinding) are all judged on the address actually used.
 */
import type { Socket } from 'node:net';
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

export function createGuardedDispatcher(options: GuardedDispatcherOptions): Dispatcher {
  const connect = buildConnector({ timeout: options.connectTimeoutMs ?? 10_000 });
  if (options.allowPrivateNetworks) return new Agent({ connect });
  return new Agent({
    connect(connectOptions, callback) {
      connect(connectOptions, (error, socket) => {
        if (error || !socket) {
          callback(error ?? new Error('connection failed'), null);
          return;
        }
        const address = (socket as Socket).remoteAddress ?? '';
        if (!isPublicAddress(address)) {
          socket.destroy();
          callback(new OutboundBlockedError(connectOptions.hostname, address), null);
          return;
        }
        callback(null, socket);
      });
    },
  });
}
