/**
 * What losing a node would do, for LB admins: for each node, the virtual services that have
 * members on it, how many of how many serving members they would lose, and which would have none
 * left. A member serves when we keep it enabled and the device's check does not say down. Pure.
 */
import { hostPort } from '../model/names.ts';
import { columns, poolsOf, type StateInput } from './by-node.ts';

export interface VsImpact {
  name: string;
  vip: string;
  port: number;
  /** Serving members on the node. */
  lose: number;
  /** Serving members in all. */
  of: number;
  left: number;
  noneLeft: boolean;
}

export interface NodeImpact {
  node: string;
  virtualServices: VsImpact[];
  /** How many of them would have no serving member left. */
  noneLeft: number;
}

export { poolsOf };

export function impact(doc: StateInput, only?: string): NodeImpact[] {
  const pools = new Map(doc.pools.map((p) => [p.name, p]));
  const byNode = new Map<string, VsImpact[]>();
  const nodes = new Set(doc.pools.flatMap((p) => p.members.map((m) => m.node)));
  for (const vs of doc.virtualServices) {
    const serving = new Map<string, string>();
    for (const name of poolsOf(vs)) {
      for (const m of pools.get(name)?.members ?? []) {
        if (m.enabled && m.health?.state !== 'down') serving.set(`${name}|${m.address}|${m.port}`, m.node);
      }
    }
    const of = serving.size;
    const counts = new Map<string, number>();
    for (const node of serving.values()) counts.set(node, (counts.get(node) ?? 0) + 1);
    for (const [node, lose] of counts) {
      const list = byNode.get(node) ?? [];
      list.push({
        name: vs.name,
        vip: vs.vip,
        port: vs.port,
        lose,
        of,
        left: of - lose,
        noneLeft: lose === of,
      });
      byNode.set(node, list);
    }
  }
  return [...nodes]
    .filter((n) => only === undefined || n === only)
    .sort()
    .map((node) => {
      const list = (byNode.get(node) ?? []).sort(
        (a, b) =>
          Number(b.noneLeft) - Number(a.noneLeft) ||
          b.lose / b.of - a.lose / a.of ||
          (a.name < b.name ? -1 : 1),
      );
      return { node, virtualServices: list, noneLeft: list.filter((v) => v.noneLeft).length };
    });
}

/** The impact of one node as a plain-text table. */
export function renderImpact(n: NodeImpact): string {
  const head = ['VIRTUAL SERVICE', 'VIP', 'LOSES', 'LEFT'];
  const rows = n.virtualServices.map((v) => [
    v.name,
    hostPort(v.vip, v.port),
    `${v.lose} of ${v.of}`,
    v.noneLeft ? 'NONE LEFT' : String(v.left),
  ]);
  const summary =
    n.virtualServices.length === 0
      ? `losing node ${n.node || '(none)'} would take no serving member from any virtual service\n`
      : `losing node ${n.node || '(none)'}: ${n.virtualServices.length} virtual service(s) lose members, ${n.noneLeft} would have none left\n`;
  return summary + (rows.length ? columns(head, rows) : '');
}
