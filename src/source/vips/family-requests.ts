/**
 * VIP requests per address family: what an object asks in each family it is served in (one
 * address, or one per family separated by a comma) and what its status shows in each. Pure.
 */
import { familyOf, type IpFamily } from '../ip-family.ts';
import { requesterKey, type VipRequester } from './requester.ts';
import type { VipRequest } from './vips.ts';

/** A VIP request in one family, with who asks (`key` is its requesterKey). */
export interface FamilyVipRequest extends VipRequest {
  family: IpFamily;
  requester: VipRequester;
}

/**
 * The addresses an object asks for (`loadBalancerIP`, or the VIP annotation: one address, or one
 * per family separated by a comma), by family. A text of no family, two of one family or one of a
 * family the object is not served in is refused in its first family (`refused`).
 */
function asked(
  texts: (string | undefined)[],
  families: readonly IpFamily[],
): { byFamily: Map<IpFamily, string>; refused?: string } {
  const byFamily = new Map<IpFamily, string>();
  const values = texts
    .filter((t): t is string => !!t)
    .flatMap((t) => t.split(','))
    .map((t) => t.trim())
    .filter(Boolean);
  for (const v of values.slice(0, 3)) {
    const f = familyOf(v);
    if (!f) {
      byFamily.set(families[0] ?? 'IPv4', v);
      continue;
    }
    if (byFamily.has(f))
      return {
        byFamily,
        refused: `requested VIPs ${JSON.stringify(values.join(',').slice(0, 96))} name two ${f} addresses`,
      };
    if (!families.includes(f))
      return {
        byFamily,
        refused: `requested VIP ${v} is ${f}, and the object is served in ${families.join(' and ') || 'no family'} (its ipFamilies and what vip.cidrs holds)`,
      };
    byFamily.set(f, v);
  }
  return { byFamily };
}

/** The first published address of each family (status.loadBalancer.ingress, Gateway addresses). */
function publishedByFamily(ips: (string | undefined)[]): Map<IpFamily, string> {
  const out = new Map<IpFamily, string>();
  for (const ip of ips) {
    const f = ip ? familyOf(ip) : undefined;
    if (ip && f && !out.has(f)) out.set(f, ip);
  }
  return out;
}

/** One request per family of an object: what it asks in that family and what it shows. */
export function perFamily(
  requester: VipRequester,
  families: readonly IpFamily[],
  requested: (string | undefined)[],
  published: (string | undefined)[],
): FamilyVipRequest[] {
  const a = asked(requested, families);
  const shown = publishedByFamily(published);
  return families.map((family, i) => ({
    key: requesterKey(requester),
    requester,
    family,
    requested: a.byFamily.get(family),
    published: shown.get(family),
    ...(a.refused && i === 0 ? { refused: a.refused } : {}),
  }));
}
