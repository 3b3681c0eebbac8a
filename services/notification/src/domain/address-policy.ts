/**
 * The SSRF guard's rule (issue #38): which addresses a webhook may never reach. A delivery goes to
 * the public internet only: loopback, RFC 1918, CGNAT (RFC 6598), link-local (169.254.0.0/16, the
 * cloud metadata address included), IPv6 unique-local and link-local, multicast, unspecified and
 * the other special-purpose ranges (documentation, benchmarking, reserved) are refused, as are
 * IPv4 addresses inside IPv6 (mapped, NAT64) whose IPv4 part is refused, and the platform's own
 * host names. `WEBHOOK_ALLOW_PRIVATE=true` lifts the range rule for development (unsafe anywhere
 * else: a user holding webhooks.manage could then make the platform call its internal services).
 */
import { BlockList, isIP } from 'node:net';

export type RefusalReason =
  | 'loopback'
  | 'private'
  | 'cgnat'
  | 'link_local'
  | 'unique_local'
  | 'multicast'
  | 'unspecified'
  | 'reserved'
  | 'platform_host'
  | 'unresolvable'
  | 'scheme';

const RANGES: ReadonlyArray<[RefusalReason, 'ipv4' | 'ipv6', string, number]> = [
  ['unspecified', 'ipv4', '0.0.0.0', 8],
  ['private', 'ipv4', '10.0.0.0', 8],
  ['cgnat', 'ipv4', '100.64.0.0', 10],
  ['loopback', 'ipv4', '127.0.0.0', 8],
  ['link_local', 'ipv4', '169.254.0.0', 16],
  ['private', 'ipv4', '172.16.0.0', 12],
  ['reserved', 'ipv4', '192.0.0.0', 24],
  ['reserved', 'ipv4', '192.0.2.0', 24],
  ['reserved', 'ipv4', '192.88.99.0', 24],
  ['private', 'ipv4', '192.168.0.0', 16],
  ['reserved', 'ipv4', '198.18.0.0', 15],
  ['reserved', 'ipv4', '198.51.100.0', 24],
  ['reserved', 'ipv4', '203.0.113.0', 24],
  ['multicast', 'ipv4', '224.0.0.0', 4],
  ['reserved', 'ipv4', '240.0.0.0', 4],
  ['unspecified', 'ipv6', '::', 128],
  ['loopback', 'ipv6', '::1', 128],
  ['reserved', 'ipv6', '100::', 64],
  ['reserved', 'ipv6', '2001:db8::', 32],
  ['reserved', 'ipv6', '2001::', 23],
  ['unique_local', 'ipv6', 'fc00::', 7],
  ['link_local', 'ipv6', 'fe80::', 10],
  ['private', 'ipv6', 'fec0::', 10],
  ['multicast', 'ipv6', 'ff00::', 8],
];

const LISTS = new Map<RefusalReason, BlockList>();
for (const [reason, family, prefix, bits] of RANGES) {
  let list = LISTS.get(reason);
  if (!list) LISTS.set(reason, (list = new BlockList()));
  list.addSubnet(prefix, bits, family);
}

/** The IPv4 address an IPv6 one carries (IPv4-mapped ::ffff:a.b.c.d, NAT64 64:ff9b::/96, IPv4-compatible), if any. */
function embeddedIpv4(address: string): string | undefined {
  const lower = address.toLowerCase();
  const dotted = /^(?:::ffff:|64:ff9b::|::)(\d+\.\d+\.\d+\.\d+)$/.exec(lower);
  if (dotted) return dotted[1];
  const hex = /^(?:::ffff:|64:ff9b::)([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(lower);
  if (!hex) return undefined;
  const hi = parseInt(hex[1]!, 16);
  const lo = parseInt(hex[2]!, 16);
  return `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`;
}

/** Why an IP address may not be reached, or undefined when it is a public one. */
export function refusedAddress(address: string): RefusalReason | undefined {
  const family = isIP(address);
  if (family === 0) return 'unresolvable';
  const v4 = family === 6 ? embeddedIpv4(address) : undefined;
  if (v4 !== undefined) return refusedAddress(v4);
  const type = family === 4 ? 'ipv4' : 'ipv6';
  for (const [reason, list] of LISTS) if (list.check(address, type)) return reason;
  return undefined;
}

/** Whether `host` (lower case, no brackets) is one of the platform's own names or under one (`.example.com` entries match subdomains). */
export function isPlatformHost(host: string, platformHosts: readonly string[]): boolean {
  const h = host.toLowerCase().replace(/\.$/, '');
  return platformHosts.some((p) => {
    const name = p.toLowerCase().replace(/\.$/, '');
    if (name.startsWith('.')) return h.endsWith(name) || h === name.slice(1);
    return h === name;
  });
}
