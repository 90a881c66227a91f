/**
 * The virtual services of an object served in address families (an IngressClass or a Gateway with
 * an IPv6 VIP, alone or beside its IPv4 one): its virtual services on each family's VIP, IPv6 ones
 * under the twin's name (src/model/names.ts `familyName`), with the same routes and pools: a
 * route's backends are reached from a VIP of either family alike. Pure.
 */
import { familyName } from '../../model/names.ts';
import type { VirtualService } from '../../model/types.ts';
import type { IpFamily } from '../ip-family.ts';
import type { SourceStatus, VipOutcome } from '../types.ts';

/** The families of an outcome's addresses, its own first. */
const families = (o: VipOutcome): { family: IpFamily; vip: string }[] =>
  o.vip === undefined ? [] : [{ family: o.family ?? 'IPv4', vip: o.vip }, ...(o.more ?? [])];

/** The virtual services built on the outcome's first VIP, in every family it has. */
export const inFamilies = <T extends VirtualService>(vss: readonly T[], o: VipOutcome): T[] =>
  families(o).flatMap((m) =>
    vss.map((vs) => (m.family === 'IPv4' ? vs : { ...vs, name: familyName(vs.name, m.family), vip: m.vip })),
  );

/** A source's status with its addresses and virtual services in every family of the outcome. */
export function statusInFamilies(st: SourceStatus, o: VipOutcome): SourceStatus {
  const all = families(o);
  if (!st.vip || all.length === 0 || (all.length === 1 && all[0]!.family === 'IPv4')) return st;
  return {
    ...st,
    ...(all.length > 1 ? { moreVips: all.slice(1).map((m) => m.vip) } : {}),
    virtualServices: all.flatMap((m) => st.virtualServices.map((n) => familyName(n, m.family))),
  };
}
