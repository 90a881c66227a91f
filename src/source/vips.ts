/**
 * VIP address management without a store of its own: a VIP the user asks for (spec.loadBalancerIP
 * or the npl-lb.io/vip annotation) is used as is; otherwise the one already published in the
 * object's status is kept while it is in a configured CIDR and free; otherwise a new one is picked
 * by hashing the owner's key into the CIDRs, probing past taken addresses. Pure and deterministic.
 */
import { createHash } from 'node:crypto';

export interface VipRequest {
  /** Who asks: `service/ns/name` or `ingressclass/name`. */
  key: string;
  requested?: string | undefined;
  /** What the object's status already shows (from an earlier run). */
  published?: string | undefined;
}

export type VipResult = { vip: string } | { conflict: string } | { exhausted: true };

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
  for (const r of sorted) {
    if (!r.requested) continue;
    const holder = taken.get(r.requested);
    if (holder) out.set(r.key, { conflict: `${r.requested} is already used by ${holder}` });
    else {
      taken.set(r.requested, r.key);
      out.set(r.key, { vip: r.requested });
    }
  }
  for (const r of sorted) {
    if (out.has(r.key) || !r.published || !inRanges(r.published, ranges) || taken.has(r.published)) continue;
    taken.set(r.published, r.key);
    out.set(r.key, { vip: r.published });
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
