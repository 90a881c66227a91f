/**
 * VIP address management without a store of its own; the published status is the record. A VIP
 * stays with the object that publishes it (MetalLB's and the ServiceCIDR allocator's rule: the
 * incumbent keeps its address, the newcomer is refused). A requested VIP (spec.loadBalancerIP or
 * the npl-lb.io/vip annotation) must be an address of the family asked for inside that family's
 * `vip.cidrs` and not held by another object; otherwise the requester gets `invalid` or `conflict`
 * and stays pending. Without a request, the published VIP is kept while it is in a CIDR; otherwise
 * a new one is picked by hashing the owner's key into the CIDRs, probing past taken addresses.
 * Each family (IPv4, IPv6) is allocated apart: an object of both families holds one of each.
 * Pure and deterministic.
 */
import { createHash } from 'node:crypto';
import { autoVip } from '../model/vips.ts';
import { bigToIp, canonicalIp, cidrFamily, cidrSpan, familyOf, type IpFamily, ipToBig } from './ip-family.ts';

export interface VipRequest {
  /** Who asks: `service/ns/name` or `ingressclass/name`. */
  key: string;
  requested?: string | undefined;
  /** What the object's status already shows (from an earlier run). */
  published?: string | undefined;
  /** The request is refused whole, with this message (src/source/vip-requests.ts says why). */
  refused?: string;
  /** The refusal is of an address kind npl-lb does not serve (a Gateway address not an IPAddress). */
  unsupported?: true;
}

export type VipResult =
  { vip: string } | { conflict: string } | { invalid: string; unsupported?: true } | { exhausted: true };

interface Range {
  first: bigint;
  size: bigint;
}

/**
 * Usable addresses of a CIDR: IPv4 without network and broadcast addresses, IPv6 without the
 * subnet-router anycast address (the first), when there are more than two.
 */
function range(cidr: string, family: IpFamily): Range {
  const { base, size } = cidrSpan(cidr, family);
  if (size <= 2n) return { first: base, size };
  return family === 'IPv4' ? { first: base + 1n, size: size - 2n } : { first: base + 1n, size: size - 1n };
}

function inRanges(ip: string, family: IpFamily, ranges: Range[]): boolean {
  if (familyOf(ip) !== family) return false;
  const n = ipToBig(ip, family);
  return ranges.some((r) => n >= r.first && n < r.first + r.size);
}

/**
 * A free address for `key`: its hash picks the start in the ranges, probing on past taken
 * addresses (one more probe than there are taken ones always ends it). IPv4 starts where it always
 * has (8 hex digits of the hash); IPv6 spreads over 16. Undefined: none is free.
 */
function pickFree(
  key: string,
  family: IpFamily,
  ranges: Range[],
  taken: ReadonlyMap<string, string>,
): string | undefined {
  const total = ranges.reduce((n, x) => n + x.size, 0n);
  if (total === 0n) return undefined;
  const hex = createHash('sha256')
    .update(key)
    .digest('hex')
    .slice(0, family === 'IPv4' ? 8 : 16);
  const start = BigInt(`0x${hex}`) % total;
  const probes = total < BigInt(taken.size + 1) ? total : BigInt(taken.size + 1);
  for (let i = 0n; i < probes; i++) {
    let idx = (start + i) % total;
    for (const rg of ranges) {
      if (idx < rg.size) {
        const ip = bigToIp(rg.first + idx, family);
        if (!taken.has(ip)) return ip;
        break;
      }
      idx -= rg.size;
    }
  }
  return undefined;
}

/** The CIDRs of one family, in the order configured. */
export const cidrsOf = (cidrs: readonly string[], family: IpFamily): string[] =>
  cidrs.filter((c) => cidrFamily(c) === family);

export function inCidrs(ip: string, cidrs: string[]): boolean {
  const family = familyOf(ip);
  return (
    family !== undefined &&
    inRanges(
      ip,
      family,
      cidrsOf(cidrs, family).map((c) => range(c, family)),
    )
  );
}

/**
 * The VIPs of one family (IPv4 unless told) from the CIDRs of that family among `cidrs`. A request
 * or a published address of the other family is not this family's: callers ask each family apart.
 */
export function allocateVips(
  requests: VipRequest[],
  cidrs: string[],
  family: IpFamily = 'IPv4',
): Map<string, VipResult> {
  const out = new Map<string, VipResult>();
  const taken = new Map<string, string>();
  const mine = cidrsOf(cidrs, family);
  const ranges = mine.map((c) => range(c, family));
  const sorted = [...requests].sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  const usable = (ip: string | undefined): ip is string => !!ip && inRanges(ip, family, ranges);
  const canon = (ip: string | undefined) => (ip && familyOf(ip) ? canonicalIp(ip) : ip);
  // 1. Incumbents: a published VIP stays with its publisher, unless it asks to move elsewhere.
  for (const r of sorted) {
    const published = canon(r.published);
    if (!usable(published) || r.refused || (r.requested && canon(r.requested) !== published)) continue;
    if (taken.has(published)) continue;
    taken.set(published, r.key);
    out.set(r.key, { vip: published });
  }
  // 2. Requests: valid, in range, and not held by anyone else.
  for (const r of sorted) {
    if (r.refused) {
      out.set(r.key, { invalid: r.refused, ...(r.unsupported ? { unsupported: true as const } : {}) });
      continue;
    }
    if (!r.requested || out.has(r.key)) continue;
    if (familyOf(r.requested) !== family) {
      out.set(r.key, {
        invalid: `requested VIP ${JSON.stringify(r.requested.slice(0, 64))} is not an ${family} address`,
      });
      continue;
    }
    const requested = canonicalIp(r.requested);
    if (!inRanges(requested, family, ranges)) {
      out.set(r.key, {
        invalid: `requested VIP ${requested} is outside vip.cidrs (${mine.join(', ') || `no ${family} CIDR configured`})`,
      });
      continue;
    }
    const holder = taken.get(requested);
    if (holder) {
      out.set(r.key, { conflict: `${requested} is already used by ${holder}` });
      continue;
    }
    taken.set(requested, r.key);
    out.set(r.key, { vip: requested });
  }
  // 3. The others: an address picked by hashing the key into the ranges.
  for (const r of sorted) {
    if (out.has(r.key)) continue;
    const found = pickFree(r.key, family, ranges, taken);
    if (found) {
      taken.set(found, r.key);
      out.set(r.key, { vip: found });
    } else out.set(r.key, { exhausted: true });
  }
  return out;
}

/** The group of a device-allocated VIP of one family: the key itself for IPv4, as it always was. */
export const deviceGroup = (key: string, family: IpFamily): string =>
  family === 'IPv4' ? key : `${key}/${family}`;

/**
 * VIPs when the load balancer allocates them (Capabilities.allocatesVips): an object that asks for
 * an address (loadBalancerIP, the VIP annotation, a Gateway's spec.addresses) gets it as a static
 * VIP, refused when another asks for the same one or it is not an address of the family; every
 * other object gets `auto:<its group>`, its address to come from the device.
 */
export function deviceVips(requests: VipRequest[], family: IpFamily = 'IPv4'): Map<string, VipResult> {
  // Every published address is an incumbent's, a static one asked for or one the device allocated
  // (an `auto:` VIP shows its address in the status): a newcomer asking for it is refused, as in
  // vip.cidrs mode, whichever key sorts first.
  const held = requests.filter((r) => r.requested || r.published || r.refused);
  const out = allocateVips(
    held.map((r) => ({
      key: r.key,
      requested: r.requested,
      published: r.published,
      refused: r.refused,
      unsupported: r.unsupported,
    })),
    [family === 'IPv4' ? '0.0.0.0/0' : '::/0'],
    family,
  );
  for (const r of requests)
    if (!r.requested && !r.refused) out.set(r.key, { vip: autoVip(deviceGroup(r.key, family)) });
  return out;
}
