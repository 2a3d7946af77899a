/** Which addresses outbound requests (asset downloads, later callbacks) may connect to: public unicast only. */
import ipaddr from 'ipaddr.js';

/**
 * True for globally routable unicast addresses. IPv4-mapped IPv6 (`::ffff:10.0.0.1`) is judged as the IPv4
 * address it carries; loopback, private, link-local (cloud metadata at 169.254.169.254), carrier-grade NAT,
 * unique-local, multicast, reserved, and the translation ranges (6to4, Teredo, NAT64) are all refused.
 */
export function isPublicAddress(ip: string): boolean {
  if (!ipaddr.isValid(ip)) return false;
  return ipaddr.process(ip).range() === 'unicast';
}
