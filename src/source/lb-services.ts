/**
 * LoadBalancer Services of ours -> an L4 virtual service per TCP or UDP port on the Service's VIP,
 * each with the pool of that port, and the Service's status. Pure.
 */
import type { ControllerConfig } from '../config/controller-config.ts';
import type { Service } from '../kube/objects.ts';
import { l4Name } from '../model/names.ts';
import type { L4VirtualService } from '../model/types.ts';
import { ipv4Network, isIPv6Cidr } from './cidr.ts';
import { ourLoadBalancer } from './ours.ts';
import { EventReasons } from '../kube/event-reasons.ts';
import type { Finding, ServicePort, SourceStatus, VipOutcome } from './types.ts';

const key = (m: { namespace: string; name: string }): string => `${m.namespace}/${m.name}`;

/** Our LoadBalancer Services, by namespace/name. */
export const ourLoadBalancerServices = (services: Service[], cfg: ControllerConfig): Service[] =>
  services
    .filter((s) => ourLoadBalancer(s, cfg))
    .map((s) => [key(s.metadata), s] as const)
    .sort(([a], [b]) => (a < b ? -1 : 1))
    .map(([, s]) => s);

/** A Service that asks for IPv6 (its ipFamilies): not served yet, said on it. */
function familyFinding(svc: Service): Finding | undefined {
  const families = svc.spec.ipFamilies ?? [];
  if (!families.includes('IPv6')) return undefined;
  const v6only = !families.includes('IPv4');
  return {
    kind: 'Service',
    key: key(svc.metadata),
    type: 'Warning',
    reason: EventReasons.IPFamilyNotServed,
    message: v6only
      ? 'ipFamilies [IPv6]: npl-lb serves IPv4 VIPs only so far; this Service gets an IPv4 VIP'
      : `ipFamilies [${families.join(', ')}] (${svc.spec.ipFamilyPolicy ?? 'SingleStack'}): npl-lb serves IPv4 only so far; no IPv6 VIP is given`,
  };
}

/**
 * A Service's `loadBalancerSourceRanges` as the VIP's client filter: IPv4 CIDRs, each in its
 * network form, sorted and once. An IPv6 range allows no client of an IPv4 VIP, so it is left out
 * (said); a range that does not parse refuses the Service's virtual services whole (said): a filter
 * read in part could let in what its owner meant to keep out. Undefined: no filter.
 */
function sourceRanges(svc: Service, findings: Finding[]): string[] | 'refused' | undefined {
  const asked = svc.spec.loadBalancerSourceRanges;
  if (!asked || asked.length === 0) return undefined;
  const out = new Set<string>();
  const ipv6: string[] = [];
  for (const raw of asked) {
    const text = raw.trim();
    const net = ipv4Network(text);
    if (net) out.add(net);
    else if (text.includes(':') && isIPv6Cidr(text)) ipv6.push(text);
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
  if (ipv6.length > 0)
    findings.push({
      kind: 'Service',
      key: key(svc.metadata),
      type: 'Warning',
      reason: EventReasons.IPFamilyNotServed,
      message: `spec.loadBalancerSourceRanges: ${ipv6.slice(0, 3).join(', ')} allow(s) IPv6 clients, and npl-lb serves IPv4 VIPs only so far: left out${out.size === 0 ? '; no IPv4 range is left, so every client is refused' : ''}`,
    });
  return [...out].sort();
}

export function loadBalancerServices(
  services: Service[],
  cluster: string,
  vipOf: (serviceKey: string) => VipOutcome,
  poolFor: (svc: Service, port: ServicePort) => string,
): { virtualServices: L4VirtualService[]; services: Map<string, SourceStatus>; findings: Finding[] } {
  const virtualServices: L4VirtualService[] = [];
  const statuses = new Map<string, SourceStatus>();
  const findings: Finding[] = [];
  for (const svc of services) {
    const family = familyFinding(svc);
    if (family) findings.push(family);
    const { vip, problem, reason } = vipOf(key(svc.metadata));
    const names: string[] = [];
    const ranges = sourceRanges(svc, findings);
    if (vip && ranges !== 'refused') {
      for (const port of svc.spec.ports) {
        if (port.protocol === 'SCTP') continue;
        const name = l4Name(cluster, svc.metadata.namespace, svc.metadata.name, port.protocol, port.port);
        virtualServices.push({
          kind: 'l4',
          name,
          vip,
          port: port.port,
          protocol: port.protocol,
          pool: poolFor(svc, port),
          source: key(svc.metadata),
          ...(ranges ? { sourceRanges: ranges } : {}),
        });
        names.push(name);
      }
    }
    statuses.set(key(svc.metadata), { vip, virtualServices: names, problem, reason });
  }
  return { virtualServices, services: statuses, findings };
}
