/**
 * The address families a LoadBalancer Service is served in, from its `spec.ipFamilies` (the order:
 * the first is its primary family) and `spec.ipFamilyPolicy`, and from the families the
 * configuration can serve (`servable`: the families of vip.cidrs, or of the device's IPAM, that the
 * load balancer serves):
 *
 * | policy           | asks                         | a family it asks that cannot be served |
 * | ---------------- | ---------------------------- | -------------------------------------- |
 * | SingleStack      | its primary family           | the other family instead, said         |
 * | PreferDualStack  | both, the primary first      | left out; said only if ipFamilies named it |
 * | RequireDualStack | both, the primary first      | left out, said                          |
 *
 * A Service whose families can none be served gets none (said): it stays pending. Pure.
 */
import type { Service } from '../../kube/objects.ts';
import { FAMILIES, type IpFamily } from '../ip-family.ts';

export interface FamilyChoice {
  /** The families served, the primary first; empty: none can be. */
  families: IpFamily[];
  /** What the Service asked that it does not get, as an Event message; undefined: nothing. */
  unserved?: string;
}

const other = (f: IpFamily): IpFamily => (f === 'IPv4' ? 'IPv6' : 'IPv4');

/** The families a Service names in `spec.ipFamilies` (valid ones, once each, in order), IPv4 by default. */
export function askedFamilies(svc: Service): IpFamily[] {
  const named = (svc.spec.ipFamilies ?? []).filter((f): f is IpFamily => (FAMILIES as string[]).includes(f));
  const out = [...new Set(named)];
  return out.length > 0 ? out : ['IPv4'];
}

/** The primary family of a Service as served (SingleStack rules): its pools for HTTP routes use it. */
export const primaryFamily = (svc: Service, servable: readonly IpFamily[]): IpFamily =>
  serviceFamilies({ ...svc, spec: { ...svc.spec, ipFamilyPolicy: 'SingleStack' } }, servable).families[0] ??
  'IPv4';

export function serviceFamilies(
  svc: Service,
  servable: readonly IpFamily[],
  why: (family: IpFamily) => string = () => '',
): FamilyChoice {
  const asked = askedFamilies(svc);
  const primary = asked[0]!;
  const policy = svc.spec.ipFamilyPolicy ?? 'SingleStack';
  const text = `ipFamilies [${asked.join(', ')}] (${policy})`;
  const cannot = (f: IpFamily) => {
    const because = why(f);
    return `${f} cannot be served${because ? ` (${because})` : ''}`;
  };
  if (policy !== 'PreferDualStack' && policy !== 'RequireDualStack') {
    if (servable.includes(primary)) return { families: [primary] };
    const instead = other(primary);
    return servable.includes(instead)
      ? {
          families: [instead],
          unserved: `${text}: ${cannot(primary)}; the Service gets an ${instead} VIP instead`,
        }
      : { families: [], unserved: `${text}: ${cannot(primary)}, nor ${instead}; the Service gets no VIP` };
  }
  const wanted: IpFamily[] = [primary, other(primary)];
  const families = wanted.filter((f) => servable.includes(f));
  const missing = wanted.filter((f) => !servable.includes(f));
  // PreferDualStack: a family it did not name is only preferred; one it named is asked for.
  const told = policy === 'RequireDualStack' ? missing : missing.filter((f) => asked.includes(f));
  if (families.length === 0)
    return { families, unserved: `${text}: ${missing.map(cannot).join('; ')}; the Service gets no VIP` };
  return told.length > 0
    ? {
        families,
        unserved: `${text}: ${told.map(cannot).join('; ')}; it gets an ${families.join(' and ')} VIP only`,
      }
    : { families };
}

/** The families a pass can serve, and why one cannot be. */
export interface Servable {
  families: IpFamily[];
  why: (family: IpFamily) => string;
}

/**
 * The families of vip.cidrs the load balancer serves (IPv6 where it says `ipv6`); with its own
 * IPAM, IPv4 and (`ipv6`) IPv6. Without any CIDR, IPv4: its Services are told vip.cidrs is empty.
 */
export function servableFamilies(
  cidrFamilies: readonly IpFamily[],
  lb: { name: string; caps: { allocatesVips?: boolean; ipv6?: boolean } },
): Servable {
  const offered: IpFamily[] = lb.caps.allocatesVips
    ? ['IPv4', 'IPv6']
    : cidrFamilies.length === 0
      ? ['IPv4']
      : FAMILIES.filter((f) => cidrFamilies.includes(f));
  const families = offered.filter((f) => f === 'IPv4' || lb.caps.ipv6 === true);
  return {
    families,
    why: (f) =>
      f === 'IPv6' && !lb.caps.ipv6
        ? `the ${lb.name} load balancer does not serve IPv6`
        : lb.caps.allocatesVips
          ? ''
          : `vip.cidrs has no ${f} range`,
  };
}
