/**
 * Pod addresses as a node's CNI plugin hands them out, for the Pods the sandbox's kubelet runs:
 * from the node's `spec.podCIDRs` (or `podCIDR`), the lowest free host address of each family.
 * Only loopback ranges are used (127.0.0.0/8 with a prefix of /16 or longer, and ::1/128): a node
 * whose Pod CIDR is anything else runs its Pods simulated, so nothing here ever binds another
 * address.
 */
import { obj } from './workload-status.ts';
import type { JsonObject } from './openapi.ts';

const V4 = /^127\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})\/(\d{1,2})$/;

/** The host addresses of a loopback CIDR, lowest first (none for any other range). */
export function* loopbackHosts(cidr: string): Generator<string> {
  if (cidr === '::1/128') {
    yield '::1';
    return;
  }
  const m = V4.exec(cidr);
  if (!m) return;
  const [b, c, d, len] = m.slice(1).map(Number) as [number, number, number, number];
  if ([b, c, d].some((x) => x > 255) || len < 16 || len > 32) return;
  const base = ((127 << 24) | (b << 16) | (c << 8) | d) >>> 0;
  const size = 2 ** (32 - len);
  const net = base - (base % size);
  // The network and broadcast addresses are left out where the range has them.
  const [first, last] = size <= 2 ? [0, size - 1] : [1, size - 2];
  for (let i = first; i <= last; i++) {
    const a = net + i;
    yield `${a >>> 24}.${(a >>> 16) & 255}.${(a >>> 8) & 255}.${a & 255}`;
  }
}

export function podCidrs(node: JsonObject): string[] {
  const spec = obj(node.spec);
  const list = Array.isArray(spec.podCIDRs) ? spec.podCIDRs.filter((c) => typeof c === 'string') : [];
  if (list.length > 0) return list;
  return typeof spec.podCIDR === 'string' ? [spec.podCIDR] : [];
}

export class PodAddresses {
  /** Address → the uid of the Pod holding it. */
  private readonly held = new Map<string, string>();

  /** One free address per Pod CIDR of the node, held for `uid`; empty when there is none. */
  take(node: JsonObject, uid: string): string[] {
    const out: string[] = [];
    for (const cidr of podCidrs(node)) {
      for (const ip of loopbackHosts(cidr)) {
        if (this.held.has(ip)) continue;
        this.held.set(ip, uid);
        out.push(ip);
        break;
      }
    }
    return out;
  }

  release(uid: string): void {
    for (const [ip, holder] of this.held) if (holder === uid) this.held.delete(ip);
  }
}
