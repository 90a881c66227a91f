/**
 * Pool members for one Service port, in the three modes: NodePortLocal (each Pod's nodeIP:nodePort
 * from its annotation, tagged with node and Pod), NodePort (every Ready node), ClusterIP (Pod IPs).
 * Ready Pods are enabled members; terminating Pods stay as disabled (draining) members. Pure.
 */
import { NPL_POD_ANNOTATION, parseNplAnnotation } from '../kube/annotations.ts';
import type { Node, Pod, Service } from '../kube/objects.ts';
import { podIPs, podServes, podTerminated, resolveTargetPort, selectorMatches } from '../kube/pod-ports.ts';
import type { Member } from '../model/types.ts';
import type { DrainPhase } from './maintenance.ts';
import { canonicalIp, familyOf, type IpFamily } from './ip-family.ts';
import { ipProblem, portProblem } from './validate.ts';

export type ServiceMode = 'NodePortLocal' | 'NodePort' | 'ClusterIP';
type ServicePort = Service['spec']['ports'][number];

export interface MemberResult {
  members: Member[];
  /** Selected Pods (namespace/name) that have no NodePortLocal mapping for this port yet. */
  waiting: string[];
  /** NodePortLocal entries refused at the boundary. */
  rejected: Rejection[];
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

/** A NodePortLocal entry (or element) dropped from a pool, with why. */
export interface Rejection {
  pod: string;
  message: string;
}

/** Nodes by name, with the addresses a NodePortLocal nodeIP may be (InternalIP and ExternalIP). */
export class NodeDirectory {
  private readonly byName = new Map<string, Node>();
  private readonly keys = new Map<string, string>();

  constructor(
    nodes: Iterable<Node>,
    /** Where each node stands in maintenance (serving unless told). */
    readonly phase: (node: string) => DrainPhase = () => 'serving',
  ) {
    for (const n of nodes) this.byName.set(n.metadata.name, n);
  }

  /** Its InternalIP and ExternalIP addresses, as written (IPv6 ones in their canonical text). */
  addresses(name: string | undefined): string[] | undefined {
    const n = name === undefined ? undefined : this.byName.get(name);
    return n?.status.addresses
      .filter((a) => a.type === 'InternalIP' || a.type === 'ExternalIP')
      .map((a) => (familyOf(a.address) ? canonicalIp(a.address) : a.address));
  }

  /** A short text that changes when the Node's addresses or maintenance phase do (for signatures). */
  addressKey(name: string | undefined): string {
    if (name === undefined) return '-';
    let k = this.keys.get(name);
    if (k === undefined) {
      k = `${(this.addresses(name) ?? ['?']).join(',')}~${this.phase(name)}`;
      this.keys.set(name, k);
    }
    return k;
  }
}

/**
 * The annotation is checked, not trusted: an entry counts only when its nodeIP is an address of
 * the Pod's own Node in the entry's family, and its (podPort, protocol, ipFamily) key is not
 * claimed by a different entry. One member per (Pod, podPort, protocol, family), ever; a pool
 * takes the entries of its family (a Pod without one waits for it).
 */
function nplMembers(port: ServicePort, pods: Pod[], nodes: NodeDirectory, family: IpFamily): MemberResult {
  const members: Member[] = [];
  const waiting: string[] = [];
  const rejected: Rejection[] = [];
  const protocol = port.protocol === 'UDP' ? 'udp' : 'tcp';
  for (const pod of pods) {
    const target = resolveTargetPort(pod, port.targetPort, port.port, port.protocol);
    if (target === undefined) continue;
    const key = podKey(pod);
    const parsed = parseNplAnnotation(pod.metadata.annotations[NPL_POD_ANNOTATION]);
    if (!parsed.ok) {
      rejected.push({ pod: key, message: `not a valid annotation (${parsed.error}); Pod skipped` });
      waiting.push(key);
      continue;
    }
    for (const inv of parsed.invalid.slice(0, 3))
      rejected.push({ pod: key, message: `${inv}; entry dropped` });
    const forPort = parsed.entries.filter((e) => e.podPort === target && e.protocol === protocol);
    const mine = forPort.filter((e) => e.ipFamily === family);
    const distinct = new Map(mine.map((e) => [`${canonical(e.nodeIP)}:${e.nodePort}`, e]));
    if (distinct.size > 1) {
      rejected.push({
        pod: key,
        message: `${distinct.size} different entries claim podPort ${target}/${protocol}/${family}; all dropped`,
      });
      continue;
    }
    const entry = [...distinct.values()][0];
    if (!entry) {
      waiting.push(key);
      continue;
    }
    const node = pod.spec.nodeName;
    // A node in maintenance: its members drain, then leave.
    const phase = node === undefined ? 'serving' : nodes.phase(node);
    if (phase === 'removed') continue;
    const problem =
      ipProblem(entry.nodeIP, entry.ipFamily) ??
      portProblem(entry.nodePort) ??
      (nodes.addresses(node)?.includes(canonical(entry.nodeIP))
        ? undefined
        : `nodeIP ${entry.nodeIP} is not an address of the Pod's Node ${node ?? '(none)'}`);
    if (problem) {
      rejected.push({ pod: key, message: `podPort ${target}/${protocol}: ${problem}; entry dropped` });
      continue;
    }
    members.push({
      address: canonical(entry.nodeIP),
      port: entry.nodePort,
      node: node ?? '',
      pod: key,
      enabled: phase === 'serving' && podServes(pod) && pod.metadata.deletionTimestamp === undefined,
    });
  }
  return { members, waiting, rejected };
}

/** An address in its canonical text; a text that is no address stays as it is (validation says so). */
const canonical = (ip: string): string => (familyOf(ip) ? canonicalIp(ip) : ip);

function internalIP(node: Node, family: IpFamily): string | undefined {
  const a = node.status.addresses.find((x) => x.type === 'InternalIP' && familyOf(x.address) === family);
  return a && canonicalIp(a.address);
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
  directory?: NodeDirectory,
  family: IpFamily = 'IPv4',
): MemberResult {
  if (mode === 'NodePort') {
    if (port.nodePort === undefined) return { members: [], waiting: [], rejected: [] };
    const members: Member[] = [];
    const phase = directory?.phase ?? (() => 'serving' as DrainPhase);
    for (const n of nodes) {
      const ip = internalIP(n, family);
      const p = phase(n.metadata.name);
      if (ip && nodeReady(n) && p !== 'removed')
        members.push({
          address: ip,
          port: port.nodePort,
          node: n.metadata.name,
          pod: '',
          enabled: p === 'serving',
        });
    }
    return { members, waiting: [], rejected: [] };
  }
  const selected = selectedPods(svc, pods);
  if (mode === 'NodePortLocal')
    return nplMembers(port, selected, directory ?? new NodeDirectory(nodes), family);
  const members: Member[] = [];
  for (const pod of selected) {
    const target = resolveTargetPort(pod, port.targetPort, port.port, port.protocol);
    // Pod IPs come from an object a user may write (pods/status): only a real address of the family counts.
    const found = podIPs(pod).find((x) => familyOf(x) === family);
    const ip = found && canonicalIp(found);
    if (target === undefined || !ip) continue;
    const phase = pod.spec.nodeName && directory ? directory.phase(pod.spec.nodeName) : 'serving';
    if (phase === 'removed') continue;
    members.push({
      address: ip,
      port: target,
      node: pod.spec.nodeName ?? '',
      pod: podKey(pod),
      enabled: phase === 'serving' && podServes(pod) && pod.metadata.deletionTimestamp === undefined,
    });
  }
  return { members, waiting: [], rejected: [] };
}
