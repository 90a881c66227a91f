/**
 * LoadBalancer Services of ours -> an L4 virtual service per TCP or UDP port on the Service's VIP,
 * each with the pool of that port, and the Service's status. Pure.
 */
import type { ControllerConfig } from '../config/controller-config.ts';
import type { Service } from '../kube/objects.ts';
import { familyName, l4Name } from '../model/names.ts';
import type { L4VirtualService } from '../model/types.ts';
import { ipv4Network, ipv6Network, MAX_SERVICE_SOURCE_RANGES } from './cidr.ts';
import { ourLoadBalancer } from './ours.ts';
import { EventReasons } from '../kube/event-reasons.ts';
import type { IpFamily } from './ip-family.ts';
import type { FamilyChoice } from './vips/service-families.ts';
import type { Finding, ServicePort, SourceStatus, VipOutcome } from './types.ts';
import type { Resolved } from './gateway/parameters.ts';
import type { PoolPolicy } from './backend-policies.ts';

const key = (m: { namespace: string; name: string }): string => `${m.namespace}/${m.name}`;

/** Our LoadBalancer Services, by namespace/name. */
export const ourLoadBalancerServices = (services: Service[], cfg: ControllerConfig): Service[] =>
  services
    .filter((s) => ourLoadBalancer(s, cfg))
    .map((s) => [key(s.metadata), s] as const)
    .sort(([a], [b]) => (a < b ? -1 : 1))
    .map(([, s]) => s);

/**
 * A Service's `loadBalancerSourceRanges` as its VIPs' client filters, per family: the CIDRs of the
 * family in their network form, sorted and once (a VIP of a family the ranges do not name allows
 * no client: its list is empty). A range that does not parse refuses the Service's virtual
 * services whole (said): a filter read in part could let in what its owner meant to keep out.
 * Undefined: no filter.
 */
function sourceRanges(svc: Service, findings: Finding[]): Record<IpFamily, string[]> | 'refused' | undefined {
  const asked = svc.spec.loadBalancerSourceRanges;
  if (!asked || asked.length === 0) return undefined;
  const out = { IPv4: new Set<string>(), IPv6: new Set<string>() };
  if (asked.length > MAX_SERVICE_SOURCE_RANGES) {
    findings.push({
      kind: 'Service',
      key: key(svc.metadata),
      type: 'Warning',
      reason: EventReasons.InvalidSourceRange,
      message: `spec.loadBalancerSourceRanges: ${asked.length} ranges, at most ${MAX_SERVICE_SOURCE_RANGES}; the Service is not served until it is fixed`,
    });
    return 'refused';
  }
  for (const raw of asked) {
    const text = raw.trim();
    const v4 = ipv4Network(text);
    const v6 = v4 ? undefined : ipv6Network(text);
    if (v4) out.IPv4.add(v4);
    else if (v6) out.IPv6.add(v6);
    else {
      findings.push({
        kind: 'Service',
        key: key(svc.metadata),
        type: 'Warning',
        reason: EventReasons.InvalidSourceRange,
        message: `spec.loadBalancerSourceRanges: ${JSON.stringify(text.slice(0, 64))} is not a CIDR; the Service is not served until it is fixed`,
      });
      return 'refused';
    }
  }
  return { IPv4: [...out.IPv4].sort(), IPv6: [...out.IPv6].sort() };
}

/**
 * A Service's virtual services, one per port and family, each with the pool of its family and
 * its family's client filter (a family without a range refuses every client: said).
 */
function portServices(
  svc: Service,
  vips: { family: IpFamily; vip: string }[],
  ranges: Record<IpFamily, string[]> | undefined,
  cluster: string,
  poolFor: (svc: Service, port: ServicePort, family: IpFamily) => string,
  findings: Finding[],
): L4VirtualService[] {
  const svcKey = key(svc.metadata);
  const out: L4VirtualService[] = [];
  for (const v of vips.filter((x) => ranges?.[x.family].length === 0))
    findings.push({
      kind: 'Service',
      key: svcKey,
      type: 'Warning',
      reason: EventReasons.IPFamilyNotServed,
      message: `spec.loadBalancerSourceRanges name no ${v.family} range: its ${v.family} VIP ${v.vip} refuses every client`,
    });
  for (const v of vips)
    for (const port of svc.spec.ports) {
      if (port.protocol === 'SCTP') continue;
      const name = familyName(
        l4Name(cluster, svc.metadata.namespace, svc.metadata.name, port.protocol, port.port),
        v.family,
      );
      out.push({
        kind: 'l4',
        name,
        vip: v.vip,
        port: port.port,
        protocol: port.protocol,
        pool: poolFor(svc, port, v.family),
        source: svcKey,
        ...(ranges ? { sourceRanges: ranges[v.family] } : {}),
      });
    }
  return out;
}

export function loadBalancerServices(
  services: Service[],
  cluster: string,
  vipOf: (service: { namespace: string; name: string }) => VipOutcome,
  poolFor: (svc: Service, port: ServicePort, family: IpFamily) => string,
  choices?: ReadonlyMap<string, FamilyChoice>,
  /** The Service's class's LoadBalancerParameters (config loadBalancerClasses); absent: none. */
  parametersOf?: (svc: Service) => Resolved,
): {
  virtualServices: L4VirtualService[];
  services: Map<string, SourceStatus>;
  findings: Finding[];
  /** The pool defaults of a virtual service's class (its Service's parameters), by its name. */
  defaults: Map<string, PoolPolicy>;
} {
  const virtualServices: L4VirtualService[] = [];
  const defaults = new Map<string, PoolPolicy>();
  const statuses = new Map<string, SourceStatus>();
  const findings: Finding[] = [];
  for (const svc of services) {
    const svcKey = key(svc.metadata);
    const unserved = choices?.get(svcKey)?.unserved;
    if (unserved)
      findings.push({
        kind: 'Service',
        key: svcKey,
        type: 'Warning',
        reason: EventReasons.IPFamilyNotServed,
        message: unserved,
      });
    const outcome = vipOf(svc.metadata);
    const { vip, problem, reason } = outcome;
    // Its class's parameters: where its virtual services go, or why none is programmed (said).
    const params = parametersOf?.(svc) ?? { placement: undefined };
    if ('invalid' in params) {
      statuses.set(svcKey, {
        vip,
        virtualServices: [],
        problem: `loadBalancerClass ${svc.spec.loadBalancerClass ?? ''}: ${params.invalid}; its virtual services are not programmed`,
        reason: EventReasons.InvalidParameters,
      });
      continue;
    }
    const placed = params.placement ? { placement: params.placement } : {};
    const names: string[] = [];
    const ranges = sourceRanges(svc, findings);
    const vips = vip ? [{ family: outcome.family ?? 'IPv4', vip }, ...(outcome.more ?? [])] : [];
    if (ranges !== 'refused')
      for (const vs of portServices(svc, vips, ranges, cluster, poolFor, findings)) {
        virtualServices.push({ ...vs, ...placed });
        names.push(vs.name);
        if (params.defaults) defaults.set(vs.name, params.defaults);
      }
    statuses.set(svcKey, {
      vip,
      ...(vips.length > 1 ? { moreVips: vips.slice(1).map((v) => v.vip) } : {}),
      virtualServices: names,
      problem,
      reason,
    });
  }
  return { virtualServices, services: statuses, findings, defaults };
}
