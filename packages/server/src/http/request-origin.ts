/**
 * The origin a request was sent to (`http://localhost:8080`): its scheme and its Host header. Without
 * `VIDEOGEN_PUBLIC_URL`, the URLs in an answer (result links, uploaded files') are made at it, so that the
 * dashboard's page, opened at whatever address reaches the server, gets them from its own origin, which its
 * content security policy allows.
 */
import type { FastifyRequest } from 'fastify';

/** A name or IPv4 address, or a bracketed IPv6 address, and an optional port: nothing that adds a path. */
const HOST =
  /^(?:[a-z0-9](?:[a-z0-9-]*[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]*[a-z0-9])?)*\.?|\[[0-9a-f:.]+\])(?::\d{1,5})?$/i;

/** Undefined when the Host header is missing or is no host and port. */
export function requestOrigin(request: FastifyRequest): string | undefined {
  const host = request.host;
  return HOST.test(host) ? `${request.protocol}://${host.toLowerCase()}` : undefined;
}
