/**
 * Nodes in and out of maintenance (excluded from load balancers, tainted by the cluster
 * autoscaler, or cordoned): says so on the Node with an Event, keeps the drain clock the desired
 * state reads, and wakes the LB pass when a node's drain time is over.
 */
import type { ControllerConfig } from '../config/controller-config.ts';
import { EventReasons } from '../kube/event-reasons.ts';
import type { EventSink } from '../kube/events.ts';
import { nodeSchema, parseOr } from '../kube/objects.ts';
import type { RawObject } from '../kube/raw-client.ts';
import type { Logger } from '../runtime/logger.ts';
import { type DrainPhase, DrainClock, maintenanceReason } from '../source/maintenance.ts';

export class NodeMaintenance {
  private readonly drain: DrainClock;
  private readonly drainTimers = new Set<NodeJS.Timeout>();

  constructor(
    private readonly config: ControllerConfig,
    private readonly events: EventSink,
    private readonly log: Logger,
    /** A node's drain time is over: its members leave (the LB pass must run). */
    private readonly onRemoved: () => void,
  ) {
    this.drain = new DrainClock(config.drainSeconds * 1000);
  }

  /** Where a node stands at `now` (serving, draining, removed). */
  phase(node: string, now: number): DrainPhase {
    return this.drain.phase(node, now);
  }

  /**
   * Follows a node into and out of maintenance: says so on the Node, and wakes the LB pass when
   * its members' drain time is over. True when the node's phase changed.
   */
  observe(before: RawObject | undefined, after: RawObject | undefined): boolean {
    const raw = after ?? before;
    const n = raw ? parseOr(nodeSchema, raw) : undefined;
    if (!n) return false;
    const name = n.metadata.name;
    if (!after) {
      const was = this.drain.phase(name, Date.now()) !== 'serving';
      this.drain.forget(name);
      return was;
    }
    const reason = maintenanceReason(n, this.config.drainCordonedNodes);
    const change = this.drain.observe(name, reason, Date.now());
    if (!change) return false;
    const target = { kind: 'Node', apiVersion: 'v1', namespace: '', name, uid: n.metadata.uid };
    const drainMs = this.config.drainSeconds * 1000;
    const say = (reasonCode: string, message: string) =>
      void this.events.record(target, 'Normal', reasonCode, message).catch(() => undefined);
    if (change === 'started') {
      say(
        EventReasons.DrainingLoadBalancerMembers,
        `node ${reason}: its load-balancer members drain and leave their pools in ${this.config.drainSeconds} s`,
      );
      this.log.info(
        { node: name, reason, drainSeconds: this.config.drainSeconds },
        'node in maintenance: draining its members',
      );
      const timer = setTimeout(() => {
        this.drainTimers.delete(timer);
        if (this.drain.phase(name, Date.now()) !== 'removed') return;
        say(
          EventReasons.RemovedLoadBalancerMembers,
          'its members left their load-balancer pools (drain time over)',
        );
        this.onRemoved();
      }, drainMs + 5);
      timer.unref();
      this.drainTimers.add(timer);
    } else {
      say(EventReasons.RestoredLoadBalancerMembers, 'back in service: its members serve again');
      this.log.info({ node: name }, 'node back in service');
    }
    return true;
  }

  stop(): void {
    for (const t of this.drainTimers) clearTimeout(t);
    this.drainTimers.clear();
  }
}
