/**
 * VIP address management without a store of its own; the published status is the record. A VIP
 * stays with the object that publishes it (MetalLB's and the ServiceCIDR allocator's rule: the
 * incumbent keeps its address, the newcomer is refused). A requested VIP (spec.loadBalancerIP or
 * the npl-lb.io/vip annotation) must be an IPv4 address inside `vip.cidrs` and not held by another
 * object; otherwise the requester gets `invalid` or `conflict` and stays pending. Without a
 * request, the published VIP is kept while it is in a CIDR; otherwise a new one is picked by
 * hashing the owner's key into the CIDRs, probing past taken addresses. Pure and deterministic.
 */
import { createHash } from 'node:crypto';
import { autoVip } from '../model/vips.ts';

export interface VipRequest {
  /** Who asks: `service/ns/name` or `ingressclass/name`. */
  key: string;
  requested?: string | undefined;
  /** What the object's status already shows (from an earlier run). */
  published?: string | undefined;
}

export type VipResult = { vip: string } | { conflict: string } | { invalid: string } | { exhausted: true };

function toInt(ip: string): number {
  return ip.split('.').reduce((n, o) => n * 256 + Number(o), 0);
}

function toIp(n: number): string {
  return [24, 16, 8, 0].map((s) => Math.floor(n / 2 ** s) % 256).join('.');
}

interface Range {
  first: number;
  size: number;
}

/** Usable addresses of a CIDR: without network and broadcast addresses when there are more than two. */
function range(cidr: string): Range {
  const [ip, bitsText] = cidr.split('/') as [string, string];
  const bits = Number(bitsText);
  const size = 2 ** (32 - bits);
  const base = toInt(ip) - (toInt(ip) % size);
  return size > 2 ? { first: base + 1, size: size - 2 } : { first: base, size };
}

function inRanges(ip: string, ranges: Range[]): boolean {
  if (!/^(\d{1,3}\.){3}\d{1,3}$/.test(ip)) return false;
  const n = toInt(ip);
  return ranges.some((r) => n >= r.first && n < r.first + r.size);
}

export function inCidrs(ip: string, cidrs: string[]): boolean {
  return inRanges(ip, cidrs.map(range));
}

export function allocateVips(requests: VipRequest[], cidrs: string[]): Map<string, VipResult> {
  const out = new Map<string, VipResult>();
  const taken = new Map<string, string>();
  const ranges = cidrs.map(range);
  const sorted = [...requests].sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  const usable = (ip: string | undefined): ip is string => !!ip && inRanges(ip, ranges);
  // 1. Incumbents: a published VIP stays with its publisher, unless it asks to move elsewhere.
  for (const r of sorted) {
    if (!usable(r.published) || (r.requested && r.requested !== r.published)) continue;
    if (taken.has(r.published)) continue;
    taken.set(r.published, r.key);
    out.set(r.key, { vip: r.published });
  }
  // 2. Requests: valid, in range, and not held by anyone else.
  for (const r of sorted) {
    if (!r.requested || out.has(r.key)) continue;
    if (!/^(\d{1,3}\.){3}\d{1,3}$/.test(r.requested) || r.requested.split('.').some((o) => Number(o) > 255)) {
      out.set(r.key, {
        invalid: `requested VIP ${JSON.stringify(r.requested.slice(0, 64))} is not an IPv4 address`,
      });
      continue;
    }
    if (!inRanges(r.requested, ranges)) {
      out.set(r.key, {
        invalid: `requested VIP ${r.requested} is outside vip.cidrs (${cidrs.join(', ') || 'none configured'})`,
      });
      continue;
    }
    const holder = taken.get(r.requested);
    if (holder) {
      out.set(r.key, { conflict: `${r.requested} is already used by ${holder}` });
      continue;
    }
    taken.set(r.requested, r.key);
    out.set(r.key, { vip: r.requested });
  }
  const total = ranges.reduce((n, x) => n + x.size, 0);
  for (const r of sorted) {
    if (out.has(r.key)) continue;
    if (total === 0) {
      out.set(r.key, { exhausted: true });
      continue;
    }
    const start = Number.parseInt(createHash('sha256').update(r.key).digest('hex').slice(0, 8), 16) % total;
    let found: string | undefined;
    for (let i = 0; i < total && !found; i++) {
      let idx = (start + i) % total;
      for (const rg of ranges) {
        if (idx < rg.size) {
          const ip = toIp(rg.first + idx);
          if (!taken.has(ip)) found = ip;
          break;
        }
        idx -= rg.size;
      }
    }
    if (found) {
      taken.set(found, r.key);
      out.set(r.key, { vip: found });
    } else out.set(r.key, { exhausted: true });
  }
  return out;
}

/**
 * VIPs when the load balancer allocates them (Capabilities.allocatesVips): an object that asks for
 * an address (loadBalancerIP, the VIP annotation, a Gateway's spec.addresses) gets it as a static
 * VIP, refused when another asks for the same one or it is not an IPv4 address; every other
 * object gets `auto:<its key>`, its address to come from the device.
 */
export function deviceVips(requests: VipRequest[]): Map<string, VipResult> {
  // Every published address is an incumbent's, a static one asked for or one the device allocated
  // (an `auto:` VIP shows its address in the status): a newcomer asking for it is refused, as in
  // vip.cidrs mode, whichever key sorts first.
  const held = requests.filter((r) => r.requested || r.published);
  const out = allocateVips(
    held.map((r) => ({ key: r.key, requested: r.requested, published: r.published })),
    ['0.0.0.0/0'],
  );
  for (const r of requests) if (!r.requested) out.set(r.key, { vip: autoVip(r.key) });
  return out;
}
