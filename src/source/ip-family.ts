/**
 * Address families (IPv4, IPv6) of the values a pass handles: which family an address or CIDR is,
 * the one text each address is written as (RFC 5952 for IPv6: `fd00::1`, never `FD00:0::1`), and
 * addresses as numbers for the VIP allocator. Every text here is untrusted: what does not parse
 * strictly (node:net's rules) has no family. Pure.
 */
import { isIPv4, isIPv6 } from 'node:net';
import { Address6 } from 'ip-address';

export type IpFamily = 'IPv4' | 'IPv6';
export const FAMILIES: readonly IpFamily[] = ['IPv4', 'IPv6'];

/** The family of an address (no zone, no prefix), undefined when it is none. */
export function familyOf(ip: string): IpFamily | undefined {
  if (isIPv4(ip)) return ip.split('.').some((o) => o.length > 1 && o.startsWith('0')) ? undefined : 'IPv4';
  return isIPv6(ip) && !ip.includes('%') ? 'IPv6' : undefined;
}

/** The address as every load balancer and status compares it (IPv6 compressed, lower case). */
export function canonicalIp(ip: string): string {
  return familyOf(ip) === 'IPv6' ? new Address6(ip).correctForm() : ip;
}

/** The family of a CIDR (`addr/n`, n within the family's bits), undefined when it is none. */
export function cidrFamily(cidr: string): IpFamily | undefined {
  const [addr, bits, ...rest] = cidr.split('/');
  if (rest.length > 0 || addr === undefined || bits === undefined || !/^(0|[1-9]\d{0,2})$/.test(bits))
    return undefined;
  const family = familyOf(addr);
  if (!family) return undefined;
  return Number(bits) <= (family === 'IPv4' ? 32 : 128) ? family : undefined;
}

const BITS: Record<IpFamily, bigint> = { IPv4: 32n, IPv6: 128n };

/** An address as a number (its family known). */
export function ipToBig(ip: string, family: IpFamily): bigint {
  if (family === 'IPv6') return new Address6(ip).bigInt();
  return ip.split('.').reduce((n, o) => n * 256n + BigInt(Number(o)), 0n);
}

/** A number as an address of the family, in its canonical text. */
export function bigToIp(n: bigint, family: IpFamily): string {
  if (family === 'IPv6') return Address6.fromBigInt(n).correctForm();
  return [24n, 16n, 8n, 0n].map((s) => String((n >> s) & 255n)).join('.');
}

/** A CIDR's addresses: its first and how many (family known: `cidrFamily` said it). */
export function cidrSpan(cidr: string, family: IpFamily): { base: bigint; size: bigint } {
  const [ip, bits] = cidr.split('/') as [string, string];
  const size = 1n << (BITS[family] - BigInt(Number(bits)));
  const n = ipToBig(ip, family);
  return { base: n - (n % size), size };
}
