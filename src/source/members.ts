/**
 * Pool members for one Service port, in the three modes: NodePortLocal (each Pod's nodeIP:nodePort
 * from its annotation, tagged with node and Pod), NodePort (every Ready node), ClusterIP (Pod IPs).
 * Ready Pods are enabled members; terminating Pods stay as disabled (draining) members. Pure.
 */
import { NPL_POD_ANNOTATION, parseNplAnnotation } from '../kube/annotations.ts';
import type { Node, Pod, Service } from '../kube/objects.ts';
import { podIPs, podReady, podTerminated, resolveTargetPort, selectorMatches } from '../kube/pod-ports.ts';
import type { Member } from '../model/types.ts';

export type ServiceMode = 'NodePortLocal' | 'NodePort' | 'ClusterIP';
type ServicePort = Service['spec']['ports'][number];

export interface MemberResult {
  members: Member[];
  /** Selected Pods (namespace/name) that have no NodePortLocal mapping for this port yet. */
  waiting: string[];
}

const podKey = (p: Pod): string => `${p.metadata.namespace}/${p.metadata.name}`;

/**
 * Pods by namespace and label, so selecting a Service's Pods costs the Pods that carry its first
 * label rather than every Pod of the cluster. Build one per desired-state pass.
 */
/** Finds the Pods a Service selects. */
export interface PodSelector {
  select(svc: Service): Pod[];
}

export const podLabelKey = (namespace: string, k: string, v: string): string =>
  `${namespace}\u0000${k}\u0000${v}`;

export class PodIndex implements PodSelector {
  private readonly byLabel = new Map<string, Pod[]>();

  constructor(pods: Iterable<Pod>) {
    for (const p of pods) {
      if (podTerminated(p)) continue;
      for (const [k, v] of Object.entries(p.metadata.labels)) {
        const key = podLabelKey(p.metadata.namespace, k, v);
        const list = this.byLabel.get(key);
        if (list) list.push(p);
        else this.byLabel.set(key, [p]);
      }
    }
  }

  select(svc: Service): Pod[] {
    const selector = svc.spec.selector;
    const first = selector ? Object.entries(selector)[0] : undefined;
    if (!first) return [];
    const candidates = this.byLabel.get(podLabelKey(svc.metadata.namespace, first[0], first[1])) ?? [];
    return candidates.filter((p) => selectorMatches(selector, p.metadata.labels));
  }
}

function isSelector(x: Iterable<Pod> | PodSelector): x is PodSelector {
  return typeof (x as PodSelector).select === 'function';
}

export function selectedPods(svc: Service, pods: Iterable<Pod> | PodSelector): Pod[] {
  return (isSelector(pods) ? pods : new PodIndex(pods)).select(svc);
}

function nplMembers(svc: Service, port: ServicePort, pods: Pod[]): MemberResult {
  const members: Member[] = [];
  const waiting: string[] = [];
  const protocol = port.protocol === 'UDP' ? 'udp' : 'tcp';
  for (const pod of pods) {
    const target = resolveTargetPort(pod, port.targetPort, port.port, port.protocol);
    if (target === undefined) continue;
    const parsed = parseNplAnnotation(pod.metadata.annotations[NPL_POD_ANNOTATION]);
    const entries = parsed.ok
      ? parsed.entries.filter((e) => e.podPort === target && e.protocol === protocol && e.ipFamily === 'IPv4')
      : [];
    if (entries.length === 0) {
      waiting.push(podKey(pod));
      continue;
    }
    const enabled = podReady(pod) && pod.metadata.deletionTimestamp === undefined;
    for (const e of entries) {
      members.push({
        address: e.nodeIP,
        port: e.nodePort,
        node: pod.spec.nodeName ?? '',
        pod: podKey(pod),
        enabled,
      });
    }
  }
  return { members, waiting };
}

function internalIP(node: Node): string | undefined {
  return node.status.addresses.find((a) => a.type === 'InternalIP' && !a.address.includes(':'))?.address;
}

function nodeReady(node: Node): boolean {
  return node.status.conditions.some((c) => c.type === 'Ready' && c.status === 'True');
}

export function membersFor(
  mode: ServiceMode,
  svc: Service,
  port: ServicePort,
  pods: Iterable<Pod> | PodSelector,
  nodes: Iterable<Node>,
): MemberResult {
  if (mode === 'NodePort') {
    if (port.nodePort === undefined) return { members: [], waiting: [] };
    const members: Member[] = [];
    for (const n of nodes) {
      const ip = internalIP(n);
      if (ip && nodeReady(n))
        members.push({ address: ip, port: port.nodePort, node: n.metadata.name, pod: '', enabled: true });
    }
    return { members, waiting: [] };
  }
  const selected = selectedPods(svc, pods);
  if (mode === 'NodePortLocal') return nplMembers(svc, port, selected);
  const members: Member[] = [];
  for (const pod of selected) {
    const target = resolveTargetPort(pod, port.targetPort, port.port, port.protocol);
    const ip = podIPs(pod).find((x) => !x.includes(':'));
    if (target === undefined || !ip) continue;
    members.push({
      address: ip,
      port: target,
      node: pod.spec.nodeName ?? '',
      pod: podKey(pod),
      enabled: podReady(pod) && pod.metadata.deletionTimestamp === undefined,
    });
  }
  return { members, waiting: [] };
}
