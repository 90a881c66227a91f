/**
 * Which NodePortLocal mappings a Pod should have, from the Services that select it: pure.
 * One target per (podPort, protocol, IP family); several Services on the same Pod port share it.
 */
import { type IpFamily, NPL_ENABLED_ANNOTATION, type NplProtocol } from '../kube/annotations.ts';
import type { Node, Pod, Service } from '../kube/objects.ts';
import { podIPs, podTerminated, resolveTargetPort, selectorMatches } from '../kube/pod-ports.ts';

export interface Target {
  podPort: number;
  protocol: NplProtocol;
  family: IpFamily;
  podIP: string;
  /** Set when a container port already publishes this port on the host: no rule, that port. */
  hostPort?: number;
}

export const targetKey = (t: Pick<Target, 'podPort' | 'protocol' | 'family'>): string =>
  `${t.podPort}/${t.protocol}/${t.family}`;

export const familyOf = (ip: string): IpFamily => (ip.includes(':') ? 'IPv6' : 'IPv4');

export type NodeIpPreference = 'ExternalIP' | 'InternalIP';

/** The Node's address for a family: ExternalIP if it has one, else InternalIP (or the reverse). */
export function nodeIPs(
  node: Node | undefined,
  preference: NodeIpPreference,
): Partial<Record<IpFamily, string>> {
  const out: Partial<Record<IpFamily, string>> = {};
  if (!node) return out;
  const order = preference === 'ExternalIP' ? ['ExternalIP', 'InternalIP'] : ['InternalIP', 'ExternalIP'];
  for (const type of order) {
    for (const a of node.status.addresses) {
      if (a.type !== type) continue;
      const f = familyOf(a.address);
      out[f] ??= a.address;
    }
  }
  return out;
}

export function serviceEligible(svc: Service): boolean {
  const type = svc.spec.type;
  return (
    svc.metadata.annotations[NPL_ENABLED_ANNOTATION] === 'true' &&
    (type === 'ClusterIP' || type === 'LoadBalancer') &&
    svc.spec.selector !== undefined &&
    Object.keys(svc.spec.selector).length > 0
  );
}

export function selects(svc: Service, pod: Pod): boolean {
  return (
    svc.metadata.namespace === pod.metadata.namespace &&
    selectorMatches(svc.spec.selector, pod.metadata.labels)
  );
}

export function podActive(pod: Pod): boolean {
  return !podTerminated(pod) && podIPs(pod).length > 0;
}

function hostPortFor(pod: Pod, podPort: number, protocol: string): number | undefined {
  for (const c of pod.spec.containers) {
    for (const p of c.ports) {
      if (p.containerPort === podPort && p.protocol === protocol && p.hostPort) return p.hostPort;
    }
  }
  return undefined;
}

/** The targets a Pod needs, given all Services (any namespace) and the node's IPs per family. */
export function desiredTargets(
  pod: Pod,
  services: Iterable<Service>,
  nodeIps: Partial<Record<IpFamily, string>>,
): Target[] {
  if (!podActive(pod)) return [];
  const out = new Map<string, Target>();
  const ips = podIPs(pod);
  for (const svc of services) {
    if (!serviceEligible(svc) || !selects(svc, pod)) continue;
    for (const sp of svc.spec.ports) {
      if (sp.protocol === 'SCTP') continue;
      const podPort = resolveTargetPort(pod, sp.targetPort, sp.port, sp.protocol);
      if (podPort === undefined) continue;
      const protocol = sp.protocol === 'UDP' ? 'udp' : 'tcp';
      const hostPort = hostPortFor(pod, podPort, sp.protocol);
      for (const ip of ips) {
        const family = familyOf(ip);
        if (!nodeIps[family]) continue;
        const t: Target = { podPort, protocol, family, podIP: ip, ...(hostPort ? { hostPort } : {}) };
        out.set(targetKey(t), t);
      }
    }
  }
  return [...out.values()];
}
