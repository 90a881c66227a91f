/**
 * CIDRs as they come from a Kubernetes object (untrusted): an IPv4 one in its network form
 * (`10.1.2.3/8` is `10.0.0.0/8`, the form every load balancer reads the same way), or whether it is
 * an IPv6 one. Anything else is not a CIDR. Pure.
 */
import { isIPv4, isIPv6 } from 'node:net';
import { Address6 } from 'ip-address';

const PREFIX = /^(0|[1-9]\d?)$/;

/**
 * The validation boundary's caps on client filters (docs/policies.md, Client filters): a
 * Service's `loadBalancerSourceRanges` (Kubernetes sets none; each device may set a lower one in
 * its capabilities) and an Ingress's `npl-lb.io/source-ranges`. A longer list refuses its object
 * whole: fail closed.
 */
export const MAX_SERVICE_SOURCE_RANGES = 1000;
export const MAX_INGRESS_SOURCE_RANGES = 64;

/** The network of an IPv4 CIDR (`a.b.c.d/n`, no leading zeros), or undefined. */
export function ipv4Network(text: string): string | undefined {
  const [addr, bits, ...rest] = text.split('/');
  if (rest.length > 0 || addr === undefined || bits === undefined || !PREFIX.test(bits)) return undefined;
  const n = Number(bits);
  if (n > 32 || !isIPv4(addr) || addr.split('.').some((o) => o.length > 1 && o.startsWith('0')))
    return undefined;
  const value = addr.split('.').reduce((v, o) => v * 256 + Number(o), 0);
  const size = 2 ** (32 - n);
  const base = value - (value % size);
  return `${[24, 16, 8, 0].map((s) => Math.floor(base / 2 ** s) % 256).join('.')}/${n}`;
}

/** Whether the text is an IPv6 CIDR (`addr/n`, n from 0 to 128). */
export function isIPv6Cidr(text: string): boolean {
  const [addr, bits, ...rest] = text.split('/');
  return (
    rest.length === 0 &&
    addr !== undefined &&
    bits !== undefined &&
    /^(0|[1-9]\d{0,2})$/.test(bits) &&
    Number(bits) <= 128 &&
    isIPv6(addr)
  );
}

/** The network of an IPv6 CIDR in its canonical text (`FD00:0::1/64` is `fd00::/64`), or undefined. */
export function ipv6Network(text: string): string | undefined {
  if (!isIPv6Cidr(text) || text.includes('%')) return undefined;
  const a = new Address6(text);
  return `${a.startAddress().correctForm()}/${a.subnetMask}`;
}
