/**
 * The fetch that downloads results: undici's, over the outbound agent whose parser a slow reader never pauses.
 * Node.js's own fetch (Node.js 22 and 24 bundle an undici with nodejs/undici#5360) ends the process when a
 * server closes the connection of a large answer, as a `Connection: close` proxy does. API calls keep the
 * global fetch: the SDK's uploads are the global FormData, which another copy of undici sends as no body.
 */
import { type Dispatcher, fetch as undiciFetch } from 'undici';
import { createOutboundAgent } from '../outbound/outbound-agent.js';

let agent: Dispatcher | undefined;

export function downloadFetch(url: string, signal?: AbortSignal) {
  agent ??= createOutboundAgent();
  return undiciFetch(url, { dispatcher: agent, ...(signal ? { signal } : {}) });
}
