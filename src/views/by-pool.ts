/**
 * The state by pool, as an LB admin looks for it on the device: each pool with the Kubernetes
 * object it stands for (the Service and port), the virtual services in front of it and the object
 * each serves, its members with node, our intent, the device's health and the reason a member is
 * down, written out (not a tooltip), and what draining each node takes away: its share of the
 * pool's serving members (a draining member carries no weight). Pure.
 */
import { byNode, type NodeMember, poolsOf, type StateInput } from './by-node.ts';
import { hostPort } from '../model/names.ts';

export interface PoolMemberView extends NodeMember {
  node: string;
}

export interface PoolView {
  pool: string;
  /** The Kubernetes Service (namespace/name) the pool stands for, and its port. */
  service: string;
  servicePort: string;
  /** The virtual services in front of it: name, where, and the object each serves. */
  virtualServices: { name: string; at: string; serves: string }[];
  members: PoolMemberView[];
  /** Per node: its serving members, of the pool's (draining the node takes those away). */
  drain: { node: string; serving: number; of: number }[];
}

/** What a virtual service serves: its LoadBalancer Service or route, or its IngressClass. */
function servedBy(vs: StateInput['virtualServices'][number]): string {
  const v = vs as { source?: string; ingressClass?: string; name: string };
  if (v.source) return v.source.includes(' ') ? v.source : `Service ${v.source}`;
  return v.ingressClass ? `IngressClass ${v.ingressClass}` : v.name;
}

export function byPool(doc: StateInput): PoolView[] {
  const members = new Map<string, PoolMemberView[]>();
  for (const n of byNode(doc))
    for (const m of n.members) members.set(m.pool, [...(members.get(m.pool) ?? []), { ...m, node: n.node }]);
  return doc.pools.map((p) => {
    const list = (members.get(p.name) ?? []).sort((a, b) =>
      a.node === b.node ? (a.address < b.address ? -1 : 1) : a.node < b.node ? -1 : 1,
    );
    const serving = list.filter((m) => m.state === 'enabled');
    const nodes = [...new Set(list.map((m) => m.node))].sort();
    return {
      pool: p.name,
      service: p.service,
      servicePort: (p as { servicePort?: string }).servicePort ?? '',
      virtualServices: doc.virtualServices
        .filter((vs) => poolsOf(vs).includes(p.name))
        .map((vs) => ({ name: vs.name, at: hostPort(vs.vip, vs.port), serves: servedBy(vs) })),
      members: list,
      drain: nodes.map((node) => ({
        node,
        serving: serving.filter((m) => m.node === node).length,
        of: serving.length,
      })),
    };
  });
}
