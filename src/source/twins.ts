/**
 * The virtual services of an object served in more than one address family (an IngressClass or a
 * Gateway with an IPv6 VIP beside its IPv4 one): each of its virtual services again on the further
 * family's VIP, under the twin's name (src/model/names.ts `familyName`), with the same routes and
 * pools: a route's backends are reached from a VIP of either family alike. Pure.
 */
import { familyName } from '../model/names.ts';
import type { VirtualService } from '../model/types.ts';
import type { IpFamily } from './ip-family.ts';
import type { SourceStatus } from './types.ts';

type More = readonly { family: IpFamily; vip: string }[] | undefined;

export const twins = <T extends VirtualService>(vss: readonly T[], more: More): T[] =>
  (more ?? []).flatMap((m) => vss.map((vs) => ({ ...vs, name: familyName(vs.name, m.family), vip: m.vip })));

/** A source's status with its further families' VIPs and twins. */
export function withTwins(st: SourceStatus, more: More): SourceStatus {
  if (!more?.length || !st.vip) return st;
  return {
    ...st,
    moreVips: more.map((m) => m.vip),
    virtualServices: [
      ...st.virtualServices,
      ...more.flatMap((m) => st.virtualServices.map((n) => familyName(n, m.family))),
    ],
  };
}
