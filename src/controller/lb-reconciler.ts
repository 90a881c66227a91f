/**
 * One pass of the load-balancer reconcile, level-triggered, as a short script: desired state from
 * the caches (source/), observed state from the adapter (kept between passes: observed-cache.ts),
 * the plan between them applied, then the pass as the cluster sees it (pass-report.ts: the status
 * of Services, Ingresses and the Gateway API objects, and the pass's Events).
 * Retryable failures throw, so the work queue backs off; terminal ones become Events.
 */
import type { ApplyResult, Capabilities, LoadBalancerAdapter } from '../adapter/contract.ts';
import {
  byName,
  type Change,
  type DesiredByName,
  type ObservedByName,
  type Plan,
  plan,
  planNamed,
} from '../plan/diff.ts';
import { ErrorCodes, NplError } from '../runtime/errors.ts';
import type { ClusterView, DesiredResult } from '../source/desired.ts';
import { DesiredCache } from './desired-cache.ts';
import { capabilityFilter } from '../source/capabilities.ts';
import { PlanScope } from './plan-scope.ts';
import { UnreadyPools } from './lb-events.ts';
import type { Pool } from '../model/types.ts';
import { afterPass, overlay } from './observed-cache.ts';
import { ReadBehind } from './read-behind.ts';
import { objectKey } from './pass-gates.ts';
import { PassLedger } from './pass-ledger.ts';
import { DeviceTiming } from './device-timing.ts';
import { PassReporter, type PassReportDeps } from './pass-report.ts';

export interface LbReconcilerDeps extends PassReportDeps {
  adapter: LoadBalancerAdapter;
  /** At most one write per pool per this many milliseconds (default 100). */
  poolIntervalMs?: number;
  /** Told what each pass applied, before a retryable failure makes the pass throw (for logs). */
  onApplied?: (applied: ApplyResult[], ms: number) => void;
  /**
   * Told when objects another pass has in flight are released while a pass left changes to them
   * (or to what depends on them) waiting: a new pass should run.
   */
  onReleased?: () => void;
  /** Told when reading the device failed (the pass throws after): the device may be down. */
  onReadFailed?: (err: unknown) => void;
  /**
   * Told when a read behind the passes (readBehind) is in place: a whole pass should run.
   * `readCpuMs`: the process's CPU over the read (read-behind.ts), a part of the sweep's cost.
   */
  onObserved?: (readCpuMs: number) => void;
}

type PassResult = { applied: ApplyResult[]; desired: DesiredResult; deferredMs: number | undefined };

/** Lists by name, made once per list (the desired lists are the same objects while unchanged). */
const indexes = new WeakMap<readonly { name: string }[], Map<string, unknown>>();
function indexed<T extends { name: string }>(list: readonly T[]): Map<string, T> {
  let m = indexes.get(list) as Map<string, T> | undefined;
  if (!m) indexes.set(list, (m = new Map(list.map((x) => [x.name, x]))));
  return m;
}

export class LbReconciler {
  /** What the passes share: in flight, parked, pool writes, applied-by, the pools known (pass-ledger.ts). */
  private readonly ledger = new PassLedger();
  /** The planning's and the device's times, for the scheduler (device-timing.ts). */
  private readonly timing = new DeviceTiming();
  /**
   * The load balancer as we last saw it, kept up to date with what we applied since; dropped after
   * a failure and by `invalidate()` (the sweep), so the next pass observes the device again.
   */
  private observed: ObservedByName | undefined;
  private readonly desired = new DesiredCache();
  /** What the next pass diffs (everything, or what changed and what is still unsettled). */
  private readonly scope = new PlanScope();
  private readonly unready = new UnreadyPools();
  /** Plans made so far: of everything, and of the changed and unsettled objects only. */
  readonly plans = { whole: 0, named: 0 };
  private readonly capabilities: (d: DesiredResult) => DesiredResult;
  /** When a pool was last written (ms, the pass clock), undefined when not since start. */
  poolWrittenAt(name: string): number | undefined {
    return this.ledger.poolWrittenAt(name);
  }

  /** A pool as the device has it (as last read, with what was applied since); undefined if unknown. */
  observedPool(name: string): Pool | undefined {
    return this.ledger.knownPool(name);
  }

  /** The CPU time of the last passes' planning (ms): the controller spaces passes by a multiple of it. */
  get planMs(): number {
    return this.timing.planMs;
  }

  /** How long an apply takes (moving average, ms). */
  get deviceMs(): number {
    return this.timing.deviceMs;
  }

  /** How long the device has been at the oldest apply in flight (ms; 0 when none). */
  oldestApplyMs(): number {
    return this.timing.oldestApplyMs();
  }

  invalidate(): void {
    this.observed = undefined;
    this.generation++;
  }
  /** Invalidations so far. */
  private generation = 0;

  /**
   * The sweep: the device read again behind the passes, which go on against the state kept
   * meanwhile (read-behind.ts); once in place, `onObserved` asks for the whole pass. Nothing kept
   * yet (a start, a failure): the next pass reads, as invalidate() has it.
   */
  readBehind(): void {
    if (this.observed) this.reads.start();
    else {
      this.invalidate();
      this.d.onObserved?.(0);
    }
  }

  /** Resolves once no read behind the passes is out (the sweep stopped first: at shutdown). */
  readsDone(): Promise<void> {
    return this.reads.done();
  }

  /** The sweep's reads behind the passes, and the numbering of writes they go by. */
  private readonly reads: ReadBehind;

  /** What the adapter can serve (read once: an adapter's capabilities do not change). */
  private readonly caps: Capabilities;

  /** The pass as the cluster sees it: statuses and Events (pass-report.ts). */
  private readonly reporter: PassReporter;

  constructor(private readonly d: LbReconcilerDeps) {
    this.caps = d.adapter.capabilities();
    this.capabilities = capabilityFilter(this.caps, d.adapter.name);
    if (d.adapter.allocatedVips) d.state.setAllocatedVips(() => d.adapter.allocatedVips!());
    this.reporter = new PassReporter(d);
    this.reads = new ReadBehind({
      read: async () => byName(await d.adapter.observe()),
      generation: () => this.generation,
      invalidate: () => this.invalidate(),
      install: (read) => {
        this.observed = read;
        this.ledger.read(read.pools);
      },
      ...(d.onReadFailed ? { onReadFailed: d.onReadFailed } : {}),
      ...(d.onObserved ? { onObserved: d.onObserved } : {}),
    });
  }

  /**
   * One pass. Updates of a pool written less than `poolIntervalMs` ago wait for a later pass, so a
   * pool is written at most once per interval however often its Pods change; `deferredMs` says when.
   */
  async reconcile(
    view: ClusterView,
    now: () => number = Date.now,
    changed?: ReadonlySet<string>,
    /** The sweep's pass: every object planned, the frontends built again past a certificate's expiry (desired-cache.ts). */
    sweep = false,
  ): Promise<PassResult> {
    // The desired state is built in the order passes are called (each from the view of its call),
    // and what changed is marked for the plans to come at once.
    const t0 = performance.now();
    const passSeq = this.ledger.next();
    const lb = { name: this.d.adapter.name, caps: this.caps };
    const built = this.desired.build(view, this.d.config, lb, changed, { frontends: sweep });
    const desired = this.capabilities(built);
    const delta = desired === built ? this.desired.changedPools : undefined;
    this.scope.mark(delta, passSeq);
    const unready = this.unready.update(
      desired.state.pools,
      delta && { names: delta, pool: (n) => this.desired.pool(n) },
    );
    let buildMs = performance.now() - t0;
    if (!this.observed) {
      try {
        // A read that an invalidation (the sweep) overtook may predate what the sweep is for: read
        // again (three tries; then it is taken).
        for (let tries = 0; !this.observed && tries < 3; tries++) {
          const generation = this.generation;
          const since = this.reads.last;
          const read = byName(await this.d.adapter.observe());
          if (this.generation === generation || tries === 2) this.observed ??= read;
          if (this.observed === read) this.reads.taken(since);
          if (this.observed === read) this.ledger.read(read.pools);
        }
      } catch (err) {
        this.d.onReadFailed?.(err);
        throw err;
      }
      // A pass called while this one waited has a newer desired state, and plans what this one
      // marked: this one is superseded.
      if (this.ledger.overtaken(passSeq)) return { applied: [], desired, deferredMs: undefined };
    }
    const observed = this.observed!;
    // From here to the gates nothing awaits: passes plan in the order their desired states were built.
    const t1 = performance.now();
    const keys = this.scope.keys(observed);
    this.plans[keys ? 'named' : 'whole']++;
    const p = keys ? planNamed(this.lookup(desired), observed, keys) : plan(desired.state, observed);
    const diffed = keys ?? [...p.changes.map(objectKey), ...p.conflicts.map((c) => `${c.kind}/${c.name}`)];
    if (!keys) this.scope.planned(diffed, passSeq);
    buildMs += performance.now() - t1;
    this.ledger.begin();
    try {
      return await this.pass(
        view,
        desired,
        { plan: p, diffed, unready, observed, seq: passSeq, cpuMs: buildMs, whole: !keys || !delta },
        now,
      );
    } finally {
      this.ledger.end();
    }
  }

  /** The pass, once planned: gates, apply, record, status, Events. */
  private async pass(
    view: ClusterView,
    desired: DesiredResult,
    planned: {
      plan: Plan;
      diffed: string[];
      unready: Pool[];
      observed: ObservedByName;
      seq: number;
      cpuMs: number;
      /** It built and compared everything (its planning time is counted apart). */
      whole: boolean;
    },
    now: () => number,
  ): Promise<PassResult> {
    const { plan: p, diffed, seq: passSeq } = planned;
    const g = this.ledger.gate(p, diffed, now(), this.d.poolIntervalMs ?? 100);
    this.timing.planned(planned.cpuMs, planned.whole);
    const started = now();
    const { applied, issued } = await this.applyClaimed(g.go, now);
    this.ledger.applied(g.go, passSeq);
    this.d.onApplied?.(applied, now() - started);
    // A create that went through gets EnsuredLoadBalancer alone; one that did not is announced as
    // being ensured before its failure is told (at a cold start of thousands of Services, one Event
    // each instead of two).
    await this.reporter.ensuring(
      view,
      applied.filter((r) => !r.ok).map((r) => r.change),
    );
    const pending = this.ledger.pending(g.held, applied, passSeq);
    // A terminal failure left the device as it was; a retryable one may have left it anywhere.
    // Other passes may have moved the observed state on meanwhile (in place): this pass's results
    // go on top. If the device was read again meanwhile, that read may or may not have seen this
    // pass's writes: it is read once more, unless this pass wrote nothing.
    const same = this.observed === planned.observed;
    if (same && applied.every((r) => r.ok || r.error?.terminal)) {
      afterPass(planned.observed, applied, p, pending);
      const unsettled = new Set([...pending, ...p.conflicts.map((c) => `${c.kind}/${c.name}`)]);
      const ok = applied.filter((r) => r.ok).map((r) => objectKey(r.change));
      this.scope.settle(diffed, unsettled, ok, passSeq, this.ledger.latest);
    } else if (
      !same &&
      this.observed &&
      this.reads.after(issued) &&
      applied.every((r) => r.ok || r.error?.terminal)
    ) {
      // The device was read again while this pass applied (it planned against the state before):
      // what it applied goes on top, and is diffed again by the passes planned since.
      overlay(this.observed, applied);
      this.scope.settle(
        [],
        new Set(),
        applied.filter((r) => r.ok).map((r) => objectKey(r.change)),
        passSeq,
        this.ledger.latest,
      );
    } else if (same || applied.length > 0) this.observed = undefined;
    this.ledger.reported();
    await this.reporter.report(view, desired, {
      applied,
      conflicts: p.conflicts,
      pending,
      unready: planned.unready,
      observed: planned.observed,
    });
    const retry = applied.filter((r) => !r.ok && !r.error?.terminal);
    if (retry.length > 0) {
      throw new NplError(
        ErrorCodes.APPLY_FAILED,
        `${retry.length} load-balancer change(s) failed and will be retried: ${retry
          .map((r) => `${r.change.op} ${r.change.kind} ${r.change.name}: ${r.error?.message ?? ''}`)
          .join('; ')}`,
      );
    }
    return { applied, desired, deferredMs: g.deferredMs };
  }

  /** The desired objects by name, for a plan of some names only. */
  private lookup(desired: DesiredResult): DesiredByName {
    return {
      pool: (n) => this.desired.pool(n),
      virtualService: (n) => indexed(desired.state.virtualServices).get(n),
      certificate: (n) => indexed(desired.state.certificates ?? []).get(n),
    };
  }

  /**
   * Applies the changes with their objects claimed (in flight) meanwhile, and records what went
   * in the ledger before they are released (no await between): a pass that starts next sees when
   * each pool was written and what is parked. `issued`: the write's number (none: the last one's),
   * against the reads of the device begun before or after it.
   */
  private async applyClaimed(
    changes: Change[],
    now: () => number,
  ): Promise<{ applied: ApplyResult[]; issued: number }> {
    if (changes.length === 0) return { applied: [], issued: this.reads.last };
    this.ledger.claim(changes);
    const issued = this.reads.issue();
    try {
      const applied = await this.timing.apply(() => this.d.adapter.apply(changes), changes.length);
      this.ledger.record(applied, now());
      this.reads.answered(issued, applied);
      return { applied, issued };
    } finally {
      if (this.ledger.release(changes)) this.d.onReleased?.();
    }
  }
}
