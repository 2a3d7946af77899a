/** Which addresses outbound requests (asset downloads, later callbacks) may connect to: public unicast only. */
import ipaddr from 'ipaddr.js';

/** IPv6 global unicast (RFC 4291); ipaddr.js calls e.g. `::7f00:1` (IPv4-compatible) or `4000::1` unicast too. */
const GLOBAL_UNICAST_V6 = ipaddr.parseCIDR('2000::/3');

/**
 * True for globally routable unicast addresses. IPv4-mapped IPv6 (`::ffff:10.0.0.1`) is judged as the IPv4
 * address it carries; loopback, private, link-local (cloud metadata at 169.254.169.254), carrier-grade NAT,
 * unique-local, multicast, reserved, documentation, the translation ranges (6to4, Teredo, NAT64) and IPv6
 * outside 2000::/3 are all refused.
 */
export function isPublicAddress(ip: string): boolean {
  if (!ipaddr.isValid(ip)) return false;
  const address = ipaddr.process(ip);
  if (address.range() !== 'unicast') return false;
  return address.kind() === 'ipv4' || address.match(GLOBAL_UNICAST_V6);
}
