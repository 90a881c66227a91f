/**
 * Pools and members: a pool request (a Service port, checked one way, under one name) and the
 * Pods it selects -> the pool with its members in the configured mode, the Pods still waiting for
 * a NodePortLocal mapping, and what was dropped at the validation boundary. Pure.
 */
import type { ControllerConfig } from '../config/controller-config.ts';
import { EventReasons } from '../kube/event-reasons.ts';
import type { Node } from '../kube/objects.ts';
import { membersFor, NodeDirectory, PodIndex, type PodSelector, type Rejection } from './members.ts';
import type { Finding, PoolBuild, PoolRequest } from './types.ts';
import type { ClusterView } from './view.ts';

/** What pools are built against in one pass. */
export interface PoolContext {
  serviceType: ControllerConfig['serviceType'];
  pods: PodSelector;
  nodeList: Node[];
  nodes: NodeDirectory;
}

export const poolContext = (view: ClusterView, cfg: ControllerConfig): PoolContext => ({
  serviceType: cfg.serviceType,
  pods: view.podIndex ?? new PodIndex(view.pods),
  nodeList: view.nodes,
  nodes: new NodeDirectory(view.nodes, view.drainPhase),
});

/** NodePortLocal entries dropped from a pool: a Warning on each Pod and one on the Service. */
function rejectionFindings(service: string, rejected: Rejection[]): Finding[] {
  if (rejected.length === 0) return [];
  const reason = EventReasons.NodePortLocalRejected;
  const out: Finding[] = rejected.map((r) => ({
    kind: 'Pod',
    key: r.pod,
    type: 'Warning',
    reason,
    message: `nodeportlocal.antrea.io: ${r.message}`,
  }));
  const pods = [...new Set(rejected.map((r) => r.pod))];
  out.push({
    kind: 'Service',
    key: service,
    type: 'Warning',
    reason,
    message: `NodePortLocal entries of ${pods.length} Pod(s) dropped (${pods.slice(0, 5).join(', ')}): ${rejected[0]!.message}`,
  });
  return out;
}

export function buildPool(req: PoolRequest, ctx: PoolContext): PoolBuild {
  const { svc, port } = req;
  const r = membersFor(ctx.serviceType, svc, port, ctx.pods, ctx.nodeList, ctx.nodes);
  return {
    waiting: r.waiting,
    findings: rejectionFindings(req.svcKey, r.rejected),
    pool: {
      name: req.name,
      protocol: port.protocol === 'UDP' ? 'UDP' : 'TCP',
      health: port.protocol === 'UDP' ? 'udp' : req.health,
      members: r.members,
      service: req.svcKey,
      servicePort: String(port.name || port.port),
    },
  };
}
