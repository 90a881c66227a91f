/**
 * The readiness gates against the load balancer: after each pass and each health read (once per
 * burst, on the next turn), the gated Pods are compared with what the device serves
 * (readiness-gate-writer.ts); a health read is asked for when a gate waits on one (at most once a
 * second), and while a gate is False or a True is not yet seen in the cache, the comparison runs
 * again each second even when nothing else happens. Nothing is compared before the first pass:
 * until then no pool says who is selected.
 */
import type { ControllerConfig } from '../config/controller-config.ts';
import { NPL_ENABLED_ANNOTATION } from '../kube/annotations.ts';
import type { Service } from '../kube/objects.ts';
import type { Pool } from '../model/types.ts';
import { ourLoadBalancer } from '../source/ours.ts';
import type { ClusterCache } from './cluster-cache.ts';
import type { DeviceReachability } from './device-reachability.ts';
import type { HealthMonitor } from './health-monitor.ts';
import type { LbReconciler } from './lb-reconciler.ts';
import type { ReadinessGateWriter } from './readiness-gate-writer.ts';
import type { StateTracker } from './state.ts';

export interface GateLoopDeps {
  writer: ReadinessGateWriter;
  cache: ClusterCache;
  state: StateTracker;
  health: HealthMonitor;
  device: DeviceReachability;
  lb: Pick<LbReconciler, 'observedPool' | 'poolWrittenAt'>;
  config: ControllerConfig;
}

export class GateLoop {
  private pools: readonly Pool[] = [];
  private passed = false;
  private running = false;
  private queued = false;
  private timer: NodeJS.Timeout | undefined;
  private lastHealthAsk = 0;

  constructor(private readonly d: GateLoopDeps) {}

  /** Compares from now on (the caches synced). */
  start(): void {
    this.running = true;
  }

  /** A pass ended with these pools: the gates are compared with them. */
  afterPass(pools: readonly Pool[]): void {
    this.pools = pools;
    this.passed = true;
    this.soon();
  }

  /** Compares on the next turn (once for a burst of asks). */
  soon(): void {
    if (this.queued || !this.running) return;
    this.queued = true;
    setImmediate(() => {
      this.queued = false;
      this.update();
    });
  }

  stop(): void {
    this.running = false;
    clearTimeout(this.timer);
    this.timer = undefined;
  }

  /** Compares the gated Pods with what the device serves; asks for a health read when one waits on it. */
  private update(): void {
    if (!this.passed || !this.running) return;
    const { writer, cache, state, health, device, lb, config } = this.d;
    let byNs: Map<string, Service[]> | undefined;
    const servicesIn = (ns: string) => {
      if (!byNs) {
        byNs = new Map();
        for (const s of cache.services())
          byNs.set(s.metadata.namespace, [...(byNs.get(s.metadata.namespace) ?? []), s]);
      }
      return byNs.get(ns) ?? [];
    };
    // The gated Pods alone (the cache keeps them apart): a cluster without gates costs nothing here.
    const waiting = writer.update(cache.gatedPods(), {
      pools: this.pools,
      servicesIn,
      // Ours before its pools are built: an NPL-enabled Service, or a LoadBalancer one of our class.
      loadBalanced: (s) =>
        s.metadata.annotations[NPL_ENABLED_ANNOTATION] === 'true' || ourLoadBalancer(s, config),
      observed: (n) => lb.observedPool(n),
      health: (pool, address, port) => state.memberHealthOf(pool, address, port),
      healthSupported: health.supported,
      healthReadSince: (pool) => {
        const read = state.healthReadAt();
        const written = lb.poolWrittenAt(pool);
        return read !== undefined && (written === undefined || read > written);
      },
      reachable: device.reachable,
    });
    const now = Date.now();
    if (waiting && now - this.lastHealthAsk >= 1000) {
      this.lastHealthAsk = now;
      void health.refresh();
    }
    // While a gate is False, it is looked at again each second (a health read may open it, and
    // one False too long is said), even when nothing else happens; so is a True written until the
    // cache shows it (removed meanwhile, it is written again).
    if ((writer.anyFalse || writer.unconfirmed) && !this.timer) {
      this.timer = setTimeout(() => {
        this.timer = undefined;
        this.soon();
      }, 1000);
      this.timer.unref();
    }
  }
}
