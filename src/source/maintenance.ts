/**
 * Node maintenance, as the load balancer sees it: a node labelled
 * `node.kubernetes.io/exclude-from-external-load-balancers`, tainted by the cluster autoscaler
 * for deletion (`ToBeDeletedByClusterAutoscaler`) or, with `drainCordonedNodes`, cordoned, is in
 * maintenance. Its members drain (disabled, connections kept) and leave their pools once the drain
 * time has passed; a node back in service serves again. Pure: the controller keeps the clock.
 */
import type { Node } from '../kube/objects.ts';

export const EXCLUDE_LABEL = 'node.kubernetes.io/exclude-from-external-load-balancers';
export const AUTOSCALER_TAINT = 'ToBeDeletedByClusterAutoscaler';

export type DrainPhase = 'serving' | 'draining' | 'removed';

/** Why a node is in maintenance, or undefined when it serves. */
export function maintenanceReason(node: Node, drainCordoned: boolean): string | undefined {
  if (node.metadata.labels[EXCLUDE_LABEL] !== undefined) return `labelled ${EXCLUDE_LABEL}`;
  if (node.spec.taints.some((t) => t.key === AUTOSCALER_TAINT)) return `tainted ${AUTOSCALER_TAINT}`;
  if (drainCordoned && node.spec.unschedulable === true) return 'cordoned';
  return undefined;
}

/** Since when each node has been in maintenance, and the phase that gives at a time. */
export class DrainClock {
  private readonly since = new Map<string, number>();

  constructor(private readonly drainMs: number) {}

  /** Records a node's state; returns what changed for it: 'started', 'ended', or undefined. */
  observe(node: string, reason: string | undefined, now: number): 'started' | 'ended' | undefined {
    const was = this.since.has(node);
    if (reason && !was) {
      this.since.set(node, now);
      return 'started';
    }
    if (!reason && was) {
      this.since.delete(node);
      return 'ended';
    }
    return undefined;
  }

  forget(node: string): void {
    this.since.delete(node);
  }

  phase(node: string, now: number): DrainPhase {
    const at = this.since.get(node);
    if (at === undefined) return 'serving';
    return now - at >= this.drainMs ? 'removed' : 'draining';
  }
}
