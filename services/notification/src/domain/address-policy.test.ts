/**
 * The SSRF rule's table: every special-purpose range refused with its reason (IPv4, IPv6, IPv4
 * inside IPv6), public addresses allowed, the platform's host names (and subdomains of a
 * `.domain` entry) refused.
 */
import { isPlatformHost, refusedAddress } from './address-policy';

describe('which addresses a webhook may reach', () => {
  it.each([
    ['127.0.0.1', 'loopback'],
    ['127.255.255.254', 'loopback'],
    ['::1', 'loopback'],
    ['10.1.2.3', 'private'],
    ['172.16.0.1', 'private'],
    ['172.31.255.255', 'private'],
    ['192.168.1.1', 'private'],
    ['100.64.0.1', 'cgnat'],
    ['169.254.169.254', 'link_local'],
    ['fe80::1', 'link_local'],
    ['fd00::1', 'unique_local'],
    ['fc12:3456::1', 'unique_local'],
    ['224.0.0.1', 'multicast'],
    ['ff02::1', 'multicast'],
    ['0.0.0.0', 'unspecified'],
    ['::', 'unspecified'],
    ['192.0.2.10', 'reserved'],
    ['198.18.0.1', 'reserved'],
    ['240.0.0.1', 'reserved'],
    ['2001:db8::1', 'reserved'],
    ['::ffff:127.0.0.1', 'loopback'],
    ['::ffff:a9fe:a9fe', 'link_local'],
    ['64:ff9b::10.0.0.1', 'private'],
    ['not an address', 'unresolvable'],
  ])('%s is refused (%s)', (address, reason) => {
    expect(refusedAddress(address)).toBe(reason);
  });

  it.each(['93.184.215.14', '8.8.8.8', '172.32.0.1', '100.128.0.1', '2606:4700::1111', '::ffff:8.8.8.8'])('%s is public', (address) => {
    expect(refusedAddress(address)).toBeUndefined();
  });

  it("refuses the platform's own host names, and a .domain entry's subdomains", () => {
    const hosts = ['iam.example.com', '.svc.cluster.local'];
    expect(isPlatformHost('IAM.example.com', hosts)).toBe(true);
    expect(isPlatformHost('iam.example.com.', hosts)).toBe(true);
    expect(isPlatformHost('identity.iam.svc.cluster.local', hosts)).toBe(true);
    expect(isPlatformHost('svc.cluster.local', hosts)).toBe(true);
    expect(isPlatformHost('api.example.com', hosts)).toBe(false);
    expect(isPlatformHost('evil-iam.example.com', hosts)).toBe(false);
  });
});
