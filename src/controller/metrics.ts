/**
 * The controller's Prometheus metrics, on a registry of its own.
 */
import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { ApplyResult } from '../adapter/contract.ts';
import type { Pool } from '../model/types.ts';
import { registerCommonMetrics } from '../runtime/common-metrics.ts';

export class ControllerMetrics {
  readonly registry = new Registry();
  /** Whether this replica writes (leader, or no leader election); set by the composition. */
  private isLeader: () => boolean = () => true;
  readonly leader = new Gauge({
    name: 'npl_lb_leader',
    help: '1 when this replica is the one that writes to the load balancer (the leader), 0 on a standby',
    registers: [this.registry],
    collect: () => {
      this.leader.set(this.isLeader() ? 1 : 0);
    },
  });

  leadership(source: () => boolean): void {
    this.isLeader = source;
  }
  /** Whether the load balancer answers, and how often it was probed; set by the controller. */
  private device: () => { reachable: boolean; probes: number } = () => ({ reachable: true, probes: 0 });
  readonly deviceReachable = new Gauge({
    name: 'npl_lb_device_reachable',
    help: '1 while the load balancer answers, 0 while it does not (writes are held and it is probed once a second)',
    registers: [this.registry],
    collect: () => {
      this.deviceReachable.set(this.device().reachable ? 1 : 0);
    },
  });
  readonly deviceProbes = new Counter({
    name: 'npl_lb_device_probes_total',
    help: 'Reads of the load balancer made only to see whether it answers',
    registers: [this.registry],
    collect: () => {
      const n = this.device().probes;
      const had = this.probesSeen;
      if (n > had) this.deviceProbes.inc(n - had);
      this.probesSeen = n;
    },
  });
  private probesSeen = 0;
  readonly deviceRestarts = new Counter({
    name: 'npl_lb_device_restarts_total',
    help: 'Restarts of a load balancer process npl-lb supervises (the device of the demo, or a sidecar) after it died',
    registers: [this.registry],
  });

  reachability(source: () => { reachable: boolean; probes: number }): void {
    this.device = source;
  }

  readonly reconcileSeconds = new Histogram({
    name: 'npl_lb_controller_reconcile_duration_seconds',
    help: 'Duration of reconciles, by kind (lb: the load-balancer pass; service: one auto-annotation)',
    labelNames: ['kind'],
    buckets: [0.005, 0.01, 0.05, 0.1, 0.5, 1, 5],
    registers: [this.registry],
  });
  /** Whole passes (the sweep, a cold start, a retry after a failure) and the period the sweep keeps. */
  readonly wholePasses = new Counter({
    name: 'npl_lb_controller_whole_passes_total',
    help: 'Load-balancer passes that observed the device again and planned everything (the sweep, a start, a retry)',
    registers: [this.registry],
  });
  readonly wholePassCpu = new Counter({
    name: 'npl_lb_controller_whole_pass_cpu_seconds_total',
    help: "The controller process's CPU (user + system) over its whole passes, with the sweep's read of the device before them",
    registers: [this.registry],
  });
  readonly wholePassLastCpu = new Gauge({
    name: 'npl_lb_controller_whole_pass_last_cpu_seconds',
    help: "The controller process's CPU over its last whole pass, with the sweep's read before it (what the sweep's period is stretched by)",
    registers: [this.registry],
  });
  /** The sweep's current period; set by the composition. */
  private sweepPeriod: () => number = () => 0;
  readonly sweepPeriodSeconds = new Gauge({
    name: 'npl_lb_controller_sweep_period_seconds',
    help: 'Seconds between two sweeps now: 60 while a whole pass is cheap, stretched so that whole passes take at most 0.5 % of a core',
    registers: [this.registry],
    collect: () => {
      this.sweepPeriodSeconds.set(this.sweepPeriod());
    },
  });

  sweeps(period: () => number): void {
    this.sweepPeriod = period;
  }
  readonly reconcileErrors = new Counter({
    name: 'npl_lb_controller_reconcile_errors_total',
    help: 'Reconciles that failed and were retried with backoff',
    labelNames: ['kind'],
    registers: [this.registry],
  });
  readonly applyErrors = new Counter({
    name: 'npl_lb_controller_apply_errors_total',
    help: 'Load-balancer changes that failed, by object kind and error code',
    labelNames: ['kind', 'code'],
    registers: [this.registry],
  });
  readonly annotationToApply = new Histogram({
    name: 'npl_lb_controller_annotation_to_apply_seconds',
    help: 'From a change of a Pod NodePortLocal annotation seen by the controller to the load balancer having it',
    buckets: [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
    registers: [this.registry],
  });
  readonly gateLatency = new Histogram({
    name: 'npl_lb_controller_readiness_gate_seconds',
    help: "From a gated Pod's containers ready to its npl-lb.io/load-balancer-ready condition True (the time a rollout waits on the load balancer)",
    buckets: [0.1, 0.25, 0.5, 1, 2.5, 5, 10, 20, 30, 60, 120],
    registers: [this.registry],
  });
  readonly gateWrites = new Counter({
    name: 'npl_lb_controller_readiness_gate_writes_total',
    help: 'Readiness gate condition patches, by status and result',
    labelNames: ['status', 'result'],
    registers: [this.registry],
  });
  readonly queueDepth: Gauge;
  /**
   * Members per pool, counted from the last pass's pools when scraped: a pass hands its pools over
   * and nothing more, so a single-Pod change costs the same at 100 Services as at 1,000 (a walk of
   * every pool per pass was half a millisecond of each change at 1,000); a scrape, which prints a
   * line per pool anyway, counts them.
   */
  readonly poolMembers: Gauge;
  private pools: readonly Pool[] = [];

  constructor(depth: () => number) {
    registerCommonMetrics(this.registry, 'controller');
    const pools = () => this.pools;
    this.poolMembers = new Gauge({
      name: 'npl_lb_controller_pool_members',
      help: 'Members per pool, enabled or draining',
      labelNames: ['pool', 'state'],
      registers: [this.registry],
      collect() {
        this.reset();
        for (const p of pools()) {
          let enabled = 0;
          for (const m of p.members) if (m.enabled) enabled++;
          this.set({ pool: p.name, state: 'enabled' }, enabled);
          this.set({ pool: p.name, state: 'draining' }, p.members.length - enabled);
        }
      },
    });
    this.queueDepth = new Gauge({
      name: 'npl_lb_controller_queue_depth',
      help: 'Keys waiting in the work queue',
      registers: [this.registry],
      collect() {
        this.set(depth());
      },
    });
  }

  recordPass(pools: readonly Pool[], applied: ApplyResult[]): void {
    this.pools = pools;
    for (const r of applied)
      if (!r.ok) this.applyErrors.inc({ kind: r.change.kind, code: r.error?.code ?? 'Unknown' });
  }
}
