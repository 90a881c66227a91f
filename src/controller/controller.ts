/**
 * The controller: caches feed the load-balancer pass scheduler (one key, the load balancer, with a
 * concurrency: pass-scheduler.ts) and a keyed work queue (`svc/<key>` for one Service's
 * auto-annotation). Level-triggered: handlers only ask; every pass re-reads the caches. Bursts of
 * events coalesce into one LB pass, and each pool is written at most once per 100 ms.
 */
import type { KubeConfig } from '@kubernetes/client-node';
import type { LoadBalancerAdapter } from '../adapter/contract.ts';
import { guardOwnership } from '../adapter/ownership.ts';
import type { ControllerConfig } from '../config/controller-config.ts';
import { NPL_MANAGED_ANNOTATION } from '../kube/annotations.ts';
import type { EventSink, EventTarget } from '../kube/events.ts';
import type { ListWatchSource } from '../kube/informer.ts';
import { errorMessage } from '../runtime/errors.ts';
import { type Logger, silentLogger } from '../runtime/logger.ts';
import { WorkQueue } from '../runtime/work-queue.ts';
import { servicesToAnnotate } from '../source/annotated-services.ts';
import { Annotator } from './annotator.ts';
import { type CacheKind, ClusterCache } from './cluster-cache.ts';
import { CANDIDATES_KEY, followCluster } from './cluster-events.ts';
import { DeviceReachability, deviceDown } from './device-reachability.ts';
import { HealthMonitor } from './health-monitor.ts';
import { LbReconciler } from './lb-reconciler.ts';
import { GatewayClassKeeper, kubeGatewayClassCreate } from './gateway-class.ts';
import { PassLog } from './pass-log.ts';
import { PassScheduler } from './pass-scheduler.ts';
import { ControllerMetrics } from './metrics.ts';
import { NodeMaintenance } from './node-maintenance.ts';
import { type GateView, StateTracker } from './state.ts';
import { kubePodConditionSink, type PodConditionSink, ReadinessGateWriter } from './readiness-gate-writer.ts';
import { SweepRecheck } from './sweep-recheck.ts';
import { SweepTimer } from './sweep-timer.ts';
import { GateLoop } from './gate-loop.ts';
import type { Pool } from '../model/types.ts';

export interface ControllerOptions {
  kubeConfig: KubeConfig;
  config: ControllerConfig;
  adapter: LoadBalancerAdapter;
  events: EventSink;
  logger?: Logger;
  sources?: Partial<Record<CacheKind, ListWatchSource>>;
  /**
   * Least time between the starts of two load-balancer passes while one is running (bursts of
   * events become one pass). Default 0: the spacing is twice what planning a pass costs, and a
   * change with no pass running starts one at once.
   */
  coalesceMs?: number;
  /** Periodic full reconcile that repairs drift on the load balancer (0: off). */
  sweepIntervalMs?: number;
  /**
   * The longest wait between two tries of a failed pass (default 2 s): once the load balancer
   * answers again, the controller converges within about this long, however long the outage was.
   */
  retryCapMs?: number;
  /** The controller's own Pod: device-wide Events (the load balancer stops or starts answering) go there. */
  self?: EventTarget | undefined;
  /** Between two probes of a device that does not answer (default 1000 ms). */
  deviceProbeMs?: number;
  /** Between two probes of an idle device that answers (default 5000 ms; 0: never). */
  deviceIdleProbeMs?: number;
  /** Where readiness gate conditions go (the API server unless a test says otherwise). */
  podConditions?: PodConditionSink;
}

/** Finds the Services whose annotation an Ingress or IngressClass change may touch. */

export class NplController {
  readonly cache: ClusterCache;
  readonly state: StateTracker;
  readonly metrics: ControllerMetrics;
  /** Whether the device answers: while it does not, passes are held and it is probed instead. */
  readonly device: DeviceReachability;
  /** Members' health from the device, on a slow timer and on demand. */
  readonly health: HealthMonitor;
  /** The Pod readiness gate npl-lb.io/load-balancer-ready (readiness-gate.ts). */
  readonly gates: ReadinessGateWriter;
  /** The gates compared with what the device serves, after passes and health reads. */
  private readonly gateLoop: GateLoop;
  /** The desired pools of the last pass, for the gates between passes. */
  private lastPools: readonly Pool[] = [];
  /** Pods whose NodePortLocal annotation changed, with when we saw it (for the latency histogram). */
  private readonly annotationSeen = new Map<string, number>();
  private readonly queue: WorkQueue;
  private readonly annotator: Annotator;
  private readonly lb: LbReconciler;
  private readonly log: Logger;
  private readonly passLog: PassLog;
  /** When load-balancer passes run (one key, the load balancer, with a concurrency). */
  private readonly passes: PassScheduler;
  private ready = false;
  /** The sweep, spaced so that whole passes take a bounded share of a core (sweep-timer.ts). */
  private readonly sweep: SweepTimer;
  /** Services whose pools may have changed since the last LB pass; `allChanged` when unknown. */
  private readonly changed = new Set<string>();
  private allChanged = true;
  /** The CPU (ms) of the sweep's read behind the passes whose whole pass has not run yet. */
  private sweepReadMs = 0;
  /** The device was read again behind the passes: the next pass is the sweep's (sweep-recheck.ts). */
  private sweepPass = false;
  private readonly recheck = new SweepRecheck();
  /** Counts for tests and metrics. */
  readonly stats = { lbReconciles: 0, annotations: 0 };

  /** The configured adapter behind the ownership guard: nothing of another owner is ever written. */
  private readonly adapter: LoadBalancerAdapter;
  /** Nodes in maintenance: their members drain, then leave. */
  private readonly nodes: NodeMaintenance;

  constructor(private readonly opts: ControllerOptions) {
    this.adapter = guardOwnership(opts.adapter);
    this.log = (opts.logger ?? silentLogger()).child({
      component: 'controller',
      cluster: opts.config.clusterName,
    });
    this.passLog = new PassLog(this.log);
    this.cache = new ClusterCache(opts.kubeConfig, this.log, opts.sources);
    this.nodes = new NodeMaintenance(opts.config, opts.events, this.log, () => {
      this.allChanged = true;
      this.passes.request();
    });
    this.state = new StateTracker(opts.config.clusterName, this.adapter.name);
    this.annotator = new Annotator(opts.kubeConfig, opts.config);
    this.lb = this.makeReconciler();
    this.device = this.makeDevice();
    this.state.setDevice(() => {
      const d = this.device.snapshot();
      return { reachable: d.reachable, since: d.since, error: d.error ?? null, probes: d.probes };
    });
    this.passes = this.makeScheduler();
    // The reconcile compares everything we own with the cluster, so a timed whole one is the sweep.
    // The device is read behind the passes: a change never waits for the sweep's read. Once the
    // read is in place (onObserved), the whole pass runs.
    this.sweep = new SweepTimer(this.opts.sweepIntervalMs ?? 60_000, () => this.lb.readBehind());
    this.queue = new WorkQueue({
      name: 'controller',
      reconcile: (k) => this.reconcile(k),
      concurrency: 4,
      logger: this.log,
      backoff: { initialMs: 200, maxMs: opts.retryCapMs ?? 2000 },
    });
    this.metrics = new ControllerMetrics(() => this.queue.length);
    this.metrics.reachability(() => this.device.snapshot());
    this.metrics.sweeps(() => this.sweep.nextMs / 1000);
    this.health = new HealthMonitor(
      this.adapter,
      this.state,
      opts.config.healthIntervalSeconds * 1000,
      this.log,
      { pools: () => this.lastPools, perTick: 100 },
    );
    this.gates = this.makeGateWriter();
    this.gateLoop = new GateLoop({
      writer: this.gates,
      cache: this.cache,
      state: this.state,
      health: this.health,
      device: this.device,
      lb: this.lb,
      config: opts.config,
    });
    // The views show each gated member Pod's gate.
    this.state.setGates(() => {
      const out = new Map<string, GateView>();
      for (const p of this.cache.view().pods) {
        const g = ReadinessGateWriter.stateOf(p);
        if (g) out.set(`${p.metadata.namespace}/${p.metadata.name}`, g);
      }
      return out;
    });
    // A health read (or a pass recorded) may settle a gate: compared again, once per burst.
    this.state.onChange(() => this.gateLoop.soon());
  }

  /** The pass's reconciler: what it applies tells the device's reachability and the pass log. */
  private makeReconciler(): LbReconciler {
    return new LbReconciler({
      kubeConfig: this.opts.kubeConfig,
      config: this.opts.config,
      adapter: this.adapter,
      events: this.opts.events,
      state: this.state,
      onApplied: (applied, ms) => {
        this.passLog.record(applied, ms);
        const down = deviceDown(applied);
        if (down) this.device.failed(down);
        else if (applied.some((r) => r.ok)) this.device.answered();
      },
      onReleased: () => this.passes.request(),
      onObserved: (readCpuMs) => {
        // The sweep's read went on behind the passes: its cost is the sweep's, with the whole pass.
        this.sweepReadMs += readCpuMs;
        this.sweepPass = true;
        for (const key of this.recheck.next(this.cache.services())) this.changed.add(key);
        this.passes.request();
      },
      onReadFailed: (err) => this.device.failed(errorMessage(err)),
      gatewayClass: new GatewayClassKeeper({
        name: this.opts.config.gatewayClass,
        controllerName: this.opts.config.gatewayController,
        create: kubeGatewayClassCreate(this.opts.kubeConfig),
        log: this.log,
      }),
    });
  }

  /** The device's reachability: on recovery everything is observed and compared again. */
  private makeDevice(): DeviceReachability {
    return new DeviceReachability({
      adapter: this.adapter,
      events: this.opts.events,
      log: this.log,
      self: this.opts.self,
      ...(this.opts.deviceProbeMs !== undefined ? { probeMs: this.opts.deviceProbeMs } : {}),
      ...(this.opts.deviceIdleProbeMs !== undefined ? { idleProbeMs: this.opts.deviceIdleProbeMs } : {}),
      onRecovered: () => {
        // Nothing written while it was down: observe it again and compare everything.
        this.lb.invalidate();
        this.allChanged = true;
        this.passes.request();
      },
    });
  }

  /** The pass scheduler, its slots and spacing from the device's and the planning's times. */
  private makeScheduler(): PassScheduler {
    const slots = Math.max(1, Math.min(16, this.adapter.capabilities().applyConcurrency ?? 1));
    return new PassScheduler({
      pass: () => this.lbPass(),
      maxSlots: slots,
      // Overlap pays while passes wait on the device more than they compute: as many passes as the
      // device time (its usual time, or the age of the call in flight if longer) covers twice the
      // planning time.
      slots: () =>
        Math.floor(Math.max(this.lb.deviceMs, this.lb.oldestApplyMs()) / Math.max(1, 2 * this.lb.planMs)),
      // Twice what planning a pass costs (its status and Events cost about as much again), so
      // passes, which may overlap, leave the event loop time for the informers.
      spacingMs: () => Math.max(this.opts.coalesceMs ?? 0, 2 * this.lb.planMs),
      deviceMs: () => this.lb.deviceMs,
      backoff: { initialMs: 200, maxMs: this.opts.retryCapMs ?? 2000 },
      log: this.log,
      onError: () => this.metrics.reconcileErrors.inc({ kind: 'lb' }),
    });
  }

  /** The readiness-gate writer, its latency and writes counted. */
  private makeGateWriter(): ReadinessGateWriter {
    return new ReadinessGateWriter({
      sink: this.opts.podConditions ?? kubePodConditionSink(this.opts.kubeConfig),
      events: this.opts.events,
      log: this.log,
      writesPerSecond: this.opts.config.readinessGateWritesPerSecond,
      warnAfterMs: this.opts.config.readinessGateWarnSeconds * 1000,
      onLatency: (s) => this.metrics.gateLatency.observe(s),
      onWrite: (status, result) => this.metrics.gateWrites.inc({ status, result }),
    });
  }

  /** Caches synced and the device answers (/readyz of the leader). */
  get isReady(): boolean {
    return this.ready && this.device.reachable;
  }

  /** Services whose annotation may have to change after an Ingress or IngressClass event. */
  private annotationCandidates(): void {
    const view = this.cache.view();
    const wanted = servicesToAnnotate(view, this.opts.config);
    for (const s of view.services) {
      const key = `${s.metadata.namespace}/${s.metadata.name}`;
      if (wanted.has(key) || s.metadata.annotations[NPL_MANAGED_ANNOTATION] === 'true')
        this.queue.add(`svc/${key}`);
    }
  }

  async start(): Promise<void> {
    followCluster(this.cache, {
      serviceType: this.opts.config.serviceType,
      changed: this.changed,
      everything: () => void (this.allChanged = true),
      all: () => this.allChanged,
      enqueue: (key) => this.queue.add(key),
      pass: () => this.passes.request(),
      annotationSeen: this.annotationSeen,
      nodeMoved: (before, after) => this.nodes.observe(before, after),
    });
    await this.cache.start();
    this.queue.start();
    this.passes.start();
    this.annotationCandidates();
    this.passes.request();
    this.health.start();
    this.device.start();
    this.sweep.start();
    this.gateLoop.start();
    this.ready = true;
  }

  /** One load-balancer pass (run by the pass scheduler). */
  private async lbPass(): Promise<{ deferredMs: number | undefined }> {
    // The device does not answer: nothing is written until a probe sees it back (then a full
    // pass runs), so an outage costs one probe a second, not a retry of every change.
    if (!this.device.reachable) {
      this.gateLoop.soon();
      return { deferredMs: undefined };
    }
    const end = this.metrics.reconcileSeconds.startTimer({ kind: 'lb' });
    try {
      const started = Date.now();
      this.stats.lbReconciles++;
      // What changed is taken before the pass: events during it count for the next one.
      const changed = this.allChanged ? undefined : new Set(this.changed);
      const sweep = this.sweepPass;
      const cpu0 = changed && !sweep ? undefined : process.cpuUsage();
      this.allChanged = false;
      this.sweepPass = false;
      this.changed.clear();
      let pass;
      try {
        const view = this.cache.view();
        const now = Date.now();
        view.drainPhase = (n) => this.nodes.phase(n, now);
        pass = await this.lb.reconcile(view, Date.now, changed, sweep);
      } catch (err) {
        this.allChanged = true;
        throw err;
      }
      if (cpu0) {
        const used = process.cpuUsage(cpu0);
        // The sweep's read behind the passes, if one led to this pass, counts with it.
        const ms = (used.user + used.system) / 1000 + this.sweepReadMs;
        this.sweepReadMs = 0;
        this.sweep.wholePassCost(ms);
        this.metrics.wholePasses.inc();
        this.metrics.wholePassCpu.inc(ms / 1000);
        this.metrics.wholePassLastCpu.set(ms / 1000);
      }
      const { applied, desired, deferredMs } = pass;
      this.lastPools = desired.state.pools;
      this.gateLoop.afterPass(desired.state.pools);
      this.metrics.recordPass(desired.state.pools, applied);
      for (const [pod, seen] of this.annotationSeen) {
        if (seen > started) continue;
        this.metrics.annotationToApply.observe((Date.now() - seen) / 1000);
        this.annotationSeen.delete(pod);
      }
      return { deferredMs };
    } finally {
      end();
    }
  }

  /** One key of the work queue: a Service's auto-annotation, or the Services an Ingress change may touch. */
  async reconcile(key: string): Promise<void> {
    const end = this.metrics.reconcileSeconds.startTimer({ kind: 'service' });
    try {
      if (key === CANDIDATES_KEY) {
        this.annotationCandidates();
      } else if (key.startsWith('svc/')) {
        const did = await this.annotator.reconcile(this.cache.view(), key.slice(4));
        if (did !== 'none') this.stats.annotations++;
      }
    } catch (err) {
      this.metrics.reconcileErrors.inc({ kind: 'service' });
      throw err;
    } finally {
      end();
    }
  }

  async settled(): Promise<void> {
    while (!this.passes.idle || this.queue.length > 0) {
      await this.queue.idle();
      await this.passes.whenIdle();
    }
    await this.queue.idle();
  }

  async stop(): Promise<void> {
    this.ready = false;
    this.gateLoop.stop();
    // No sweep starts a read of the device now, and one out ends before the device's probes stop.
    this.sweep.stop();
    await this.lb.readsDone();
    await this.health.stop();
    await this.device.stop();
    this.nodes.stop();
    await this.passes.stop();
    await this.queue.stop();
    await this.cache.stop();
  }
}
