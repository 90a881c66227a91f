/**
 * VIP address management without a store of its own; the published status is the record. A VIP
 * stays with the object that publishes it (MetalLB's and the ServiceCIDR allocator's rule: the
 * incumbent keeps its address, the newcomer is refused). A requested VIP (spec.loadBalancerIP or
 * the npl-lb.io/vip annotation) must be an address of the family asked for inside that family's
 * `vip.cidrs` and not held by another object; otherwise the requester gets `invalid` or `conflict`
 * and stays pending. Without a request, the published VIP is kept while it is in a CIDR; otherwise
 * a new one is picked by hashing the owner's key into the CIDRs, probing past taken addresses.
 * Each family (IPv4, IPv6) is allocated apart: an object of both families holds one of each.
 * LoadBalancer Services that carry one sharing key (MetalLB's `allow-shared-ip`) may hold one
 * address together while their ports do not clash (the same protocol and port twice): a sharer
 * joins the address a sharer of its key holds, requested, published or picked (sharers hash their
 * key, not their name, so they start at one address). Pure and deterministic.
 */
import { createHash } from 'node:crypto';
import { autoVip } from '../../model/vips.ts';
import {
  bigToIp,
  canonicalIp,
  cidrFamily,
  cidrSpan,
  familyOf,
  type IpFamily,
  ipToBig,
} from '../ip-family.ts';

export interface VipRequest {
  /** Who asks, as requesterKey gives it (`service/ns/name`, `ingressclass/name`, `gateway/ns/name`). */
  key: string;
  requested?: string | undefined;
  /** What the object's status already shows (from an earlier run). */
  published?: string | undefined;
  /** The request is refused whole, with this message (src/source/vips/requests.ts says why). */
  refused?: string;
  /** The refusal is of an address kind npl-lb does not serve (a Gateway address not an IPAddress). */
  unsupported?: true;
  /**
   * The CIDRs its VIP must come from (its class's LoadBalancerParameters, inside vip.cidrs);
   * absent: every CIDR given.
   */
  cidrs?: readonly string[];
  /** A sharing key and the ports (`TCP/80`) it needs on the address (LoadBalancer Services). */
  share?: { key: string; ports: readonly string[] };
}

/** Who holds an address: its first holder, and with a sharing key the ports its sharers use. */
interface Holder {
  key: string;
  share?: string;
  ports: Set<string>;
}

/** Whether `r` may hold the address with `h`: one sharing key, and no port both use. */
const joins = (h: Holder, r: VipRequest): boolean =>
  !!h.share && h.share === r.share?.key && r.share.ports.every((p) => !h.ports.has(p));

/** Why `r` may not hold the address `h` holds, in words. */
function clash(ip: string, h: Holder, r: VipRequest): string {
  if (!h.share || h.share !== r.share?.key) return `${ip} is already used by ${h.key}`;
  const both = r.share.ports.filter((p) => h.ports.has(p));
  return `${ip} is shared under key ${r.share.key}, and ${both.join(', ')} is already used there by ${h.key}`;
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
  taken: ReadonlyMap<string, unknown>,
  /** A taken address it may have all the same (a sharer's). */
  mayJoin: (ip: string) => boolean = () => false,
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
        if (!taken.has(ip) || mayJoin(ip)) return ip;
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
 * A requested VIP checked: its canonical form, or why it cannot be had (another family, or outside
 * the ranges it may come from: its class's own, else the controller's).
 */
function checkRequested(
  requested: string,
  ownRanges: boolean,
  family: IpFamily,
  from: { text: string[]; ranges: Range[] },
): { ip: string } | { invalid: string } {
  if (familyOf(requested) !== family)
    return { invalid: `requested VIP ${JSON.stringify(requested.slice(0, 64))} is not an ${family} address` };
  const ip = canonicalIp(requested);
  if (inRanges(ip, family, from.ranges)) return { ip };
  return {
    invalid: ownRanges
      ? `requested VIP ${ip} is outside its class's vip.cidrs (${from.text.join(', ') || `no ${family} CIDR`})`
      : `requested VIP ${ip} is outside vip.cidrs (${from.text.join(', ') || `no ${family} CIDR configured`})`,
  };
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
  const taken = new Map<string, Holder>();
  const hold = (ip: string, r: VipRequest) => {
    const h = taken.get(ip);
    if (h) for (const p of r.share?.ports ?? []) h.ports.add(p);
    else
      taken.set(ip, {
        key: r.key,
        ...(r.share ? { share: r.share.key } : {}),
        ports: new Set(r.share?.ports ?? []),
      });
    out.set(r.key, { vip: ip });
  };
  const mine = cidrsOf(cidrs, family);
  const all = mine.map((c) => range(c, family));
  // A requester's own ranges (its class's), of this family: none of it means none to give.
  const own = new Map<VipRequest, { text: string[]; ranges: Range[] }>();
  const rangesOf = (r: VipRequest): { text: string[]; ranges: Range[] } => {
    if (!r.cidrs) return { text: mine, ranges: all };
    let o = own.get(r);
    if (!o) {
      const text = cidrsOf(r.cidrs, family);
      own.set(r, (o = { text, ranges: text.map((c) => range(c, family)) }));
    }
    return o;
  };
  const sorted = [...requests].sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  const usable = (ip: string | undefined, r: VipRequest): ip is string =>
    !!ip && inRanges(ip, family, rangesOf(r).ranges);
  const canon = (ip: string | undefined) => (ip && familyOf(ip) ? canonicalIp(ip) : ip);
  // 1. Incumbents: a published VIP stays with its publisher, unless it asks to move elsewhere.
  for (const r of sorted) {
    const published = canon(r.published);
    if (!usable(published, r) || r.refused || (r.requested && canon(r.requested) !== published)) continue;
    const h = taken.get(published);
    if (h && !joins(h, r)) continue;
    hold(published, r);
  }
  // 2. Requests: valid, in range, and not held by anyone else.
  for (const r of sorted) {
    if (r.refused) {
      out.set(r.key, { invalid: r.refused, ...(r.unsupported ? { unsupported: true as const } : {}) });
      continue;
    }
    if (!r.requested || out.has(r.key)) continue;
    const checked = checkRequested(r.requested, r.cidrs !== undefined, family, rangesOf(r));
    if ('invalid' in checked) {
      out.set(r.key, checked);
      continue;
    }
    const requested = checked.ip;
    const holder = taken.get(requested);
    if (holder && !joins(holder, r)) {
      out.set(r.key, { conflict: clash(requested, holder, r) });
      continue;
    }
    hold(requested, r);
  }
  // 3. The others: an address picked by hashing the key into the ranges (a sharer: its sharing
  // key, so sharers start at one address and join it while their ports allow).
  for (const r of sorted) {
    if (out.has(r.key)) continue;
    const shared = r.share ? [...taken].find(([ip, h]) => joins(h, r) && usable(ip, r))?.[0] : undefined;
    const start = r.share ? `share/${r.share.key}` : r.key;
    const found =
      shared ?? pickFree(start, family, rangesOf(r).ranges, taken, (ip) => joins(taken.get(ip)!, r));
    if (found) hold(found, r);
    else out.set(r.key, { exhausted: true });
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
      ...(r.share ? { share: r.share } : {}),
    })),
    [family === 'IPv4' ? '0.0.0.0/0' : '::/0'],
    family,
  );
  // Sharers of one key without an address of their own: one group, so the device gives them one
  // address, while their ports allow (a sharer whose port clashes gets a group of its own).
  const groups = new Map<string, Set<string>>();
  const sorted = [...requests].sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  for (const r of sorted) {
    if (r.requested || r.refused) continue;
    const ports = r.share ? (groups.get(r.share.key) ?? new Set<string>()) : undefined;
    if (r.share && ports && r.share.ports.every((p) => !ports.has(p))) {
      for (const p of r.share.ports) ports.add(p);
      groups.set(r.share.key, ports);
      out.set(r.key, { vip: autoVip(deviceGroup(`share/${r.share.key}`, family)) });
    } else out.set(r.key, { vip: autoVip(deviceGroup(r.key, family)) });
  }
  return out;
}
