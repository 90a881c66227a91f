/**
 * A pass diffs only what changed and what earlier passes left unsettled (src/controller/plan-scope.ts).
 * The oracle: whatever the order in which overlapping passes' device calls end, and whatever fails
 * (terminally: parked; retryably: the device is read again), once the Pods stop changing and the
 * faults stop, passes that are told nothing changed bring the device to exactly the full build of
 * the desired state, and then write nothing more.
 *
 * Mutations this catches (each tried by hand, each failing at least one of two runs): a pass
 * settling a key a later pass marked (the `m <= seq` check dropped); an applied key not marked
 * again when a later pass had planned (the `newest > seq` rule dropped); pending keys settled;
 * the scope not reset when the device is read again; the observed state carrying an "equal"
 * object over a write another pass made since; a read the sweep overtook being taken; a pass
 * that waited for a read planning after a newer one.
 *
 * The sweep's read behind the passes (readBehind): changes planned and applied while it is out;
 * what they applied put on top of it once in (dropped: the changed pool written twice); a write
 * issued before the read began and answered while it was out makes it read again (taken: a pool
 * removed after that write stays gone; the property found this one), and one answered after the
 * read is in is not put on top of it (put: the same).
 */
import assert from 'node:assert/strict';
import { isDeepStrictEqual } from 'node:util';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { KubeConfig } from '@kubernetes/client-node';
import { MemoryAdapter } from '../../../adapters/memory/adapter.ts';
import type { ApplyError, LoadBalancerAdapter } from '../../../src/adapter/contract.ts';
import type { Change } from '../../../src/adapter/changes.ts';
import { parseControllerConfig } from '../../../src/config/controller-config.ts';
import { LbReconciler } from '../../../src/controller/lb-reconciler.ts';
import { StateTracker } from '../../../src/controller/state.ts';
import { NPL_POD_ANNOTATION } from '../../../src/kube/annotations.ts';
import { nodeSchema, podSchema, serviceSchema, type Pod } from '../../../src/kube/objects.ts';
import { normalizePool, normalizeVirtualService } from '../../../src/model/normalize.ts';
import type { Pool } from '../../../src/model/types.ts';
import { buildDesired, type ClusterView } from '../../../src/source/desired.ts';

const config = parseControllerConfig(
  'clusterName: c1\ndefaultLoadBalancer: true\nvip: {cidrs: [192.0.2.64/26]}',
);
const SERVICES = 3;
const PODS = 6;
const services = Array.from({ length: SERVICES }, (_, s) =>
  serviceSchema.parse({
    metadata: { name: `svc-${s}`, namespace: 'default', uid: `s${s}`, resourceVersion: '1' },
    spec: {
      type: 'LoadBalancer',
      selector: { app: `app-${s}` },
      ports: [{ name: 'http', port: 80, targetPort: 8080 }],
    },
    status: { loadBalancer: { ingress: [] } },
  }),
);
const nodes = [1, 2].map((n) =>
  nodeSchema.parse({
    metadata: { name: `n${n}`, resourceVersion: '1' },
    status: {
      addresses: [{ type: 'InternalIP', address: `192.0.2.${n}` }],
      conditions: [{ type: 'Ready', status: 'True' }],
    },
  }),
);

function pod(i: number, nodePort: number, ready: boolean, rv: number): Pod {
  const node = 1 + (i % 2);
  return podSchema.parse({
    metadata: {
      name: `pod-${i}`,
      namespace: 'default',
      uid: `p${i}`,
      resourceVersion: String(rv),
      labels: { app: `app-${i % SERVICES}` },
      annotations: {
        [NPL_POD_ANNOTATION]: JSON.stringify([
          { podPort: 8080, nodeIP: `192.0.2.${node}`, nodePort, protocol: 'tcp', ipFamily: 'IPv4' },
        ]),
      },
    },
    spec: { nodeName: `n${node}`, containers: [{ name: 'c', image: 'x', ports: [{ containerPort: 8080 }] }] },
    status: {
      phase: 'Running',
      podIP: `10.244.0.${i + 1}`,
      conditions: [{ type: 'Ready', status: ready ? 'True' : 'False' }],
    },
  });
}

type Command =
  | { kind: 'pod'; i: number; nodePort: number; ready: boolean }
  | { kind: 'pass' }
  | { kind: 'fault'; down: boolean; svc: number }
  | { kind: 'drift'; svc: number; behind: boolean }
  | { kind: 'tick' };

const command: fc.Arbitrary<Command> = fc.oneof(
  fc.record({
    kind: fc.constant('pod' as const),
    i: fc.integer({ min: 0, max: PODS - 1 }),
    nodePort: fc.constantFrom(61000, 61001, 61003),
    ready: fc.boolean(),
  }),
  fc.constant({ kind: 'pass' as const }),
  fc.constant({ kind: 'pass' as const }),
  fc.record({
    kind: fc.constant('drift' as const),
    svc: fc.integer({ min: 0, max: SERVICES - 1 }),
    behind: fc.boolean(),
  }),
  fc.constant({ kind: 'tick' as const }),
  fc.constant({ kind: 'tick' as const }),
  fc.constant({ kind: 'tick' as const }),
  fc.record({
    kind: fc.constant('fault' as const),
    down: fc.boolean(),
    svc: fc.integer({ min: 0, max: SERVICES - 1 }),
  }),
);

/** The device refuses a member on this port, for good (a terminal failure: parked). */
const REFUSED = 61003;
const refused = (p: Pool) => p.members.some((m) => m.port === REFUSED);

/**
 * The device against the full build of what is desired, but for the pools it refuses and the
 * virtual services of their Services (what the device holds of those is what it held before).
 */
function differences(device: MemoryAdapter, view: ClusterView): string[] {
  const full = buildDesired(view, config).state;
  const skip = new Set(full.pools.filter(refused).map((p) => p.service));
  const want = {
    pools: full.pools.filter((p) => !skip.has(p.service)),
    virtualServices: full.virtualServices.filter((v) => !skip.has(v.kind === 'l4' ? v.source : '')),
  };
  const out: string[] = [];
  const pools = new Map([...device.device.pools.values()].map(({ pool }) => [pool.name, pool]));
  const vss = new Map([...device.device.virtualServices.values()].map(({ vs }) => [vs.name, vs]));
  for (const [name, { pool }] of device.device.pools) if (skip.has(pool.service)) pools.delete(name);
  for (const [name, { vs }] of device.device.virtualServices)
    if (skip.has(vs.kind === 'l4' ? vs.source : '')) vss.delete(name);
  for (const p of want.pools) {
    const have = pools.get(p.name);
    if (!have || !isDeepStrictEqual(normalizePool(have), normalizePool(p))) out.push(`pool/${p.name}`);
    pools.delete(p.name);
  }
  for (const v of want.virtualServices) {
    const have = vss.get(v.name);
    if (!have || !isDeepStrictEqual(normalizeVirtualService(have), normalizeVirtualService(v)))
      out.push(`virtualService/${v.name}`);
    vss.delete(v.name);
  }
  return [
    ...out,
    ...[...pools.keys()].map((n) => `extra pool/${n}`),
    ...[...vss.keys()].map((n) => `extra vs/${n}`),
  ];
}

/**
 * The reconciler over the memory device, every device call ending when `gate` says; the cluster
 * as the controller's cache hands it out (the collections other than Pods the same objects from
 * pass to pass, so passes told what changed take the Pod-only path).
 */
class Rig {
  readonly down = new Set<string>();
  readonly memory = new MemoryAdapter({
    owner: 'c1',
    fault: (c: Change): ApplyError | undefined => {
      if (c.kind !== 'pool' || c.op === 'delete') return undefined;
      if (refused(c.desired)) return { code: 'Invalid', message: 'port refused', terminal: true };
      if (this.down.has(c.desired.service)) return { code: 'Unavailable', message: 'busy', terminal: false };
      return undefined;
    },
  });
  readonly lb: LbReconciler;
  private rv = 1;
  readonly pods = Array.from({ length: PODS }, (_, i) => pod(i, 61000, true, 1));
  private readonly ingresses: ClusterView['ingresses'] = [];
  private readonly ingressClasses: ClusterView['ingressClasses'] = [];
  private changed: Set<string> | undefined;

  /**
   * `readAtCall`: a read sees the device as it was when asked, and a write is on the device when
   * issued, however late either answers.
   */
  constructor(gate: <T>(p: Promise<T>, label: string) => Promise<T>, readAtCall = false) {
    const memory = this.memory;
    const adapter: LoadBalancerAdapter = Object.assign(Object.create(memory) as MemoryAdapter, {
      apply: (changes: Change[]) =>
        readAtCall
          ? gate(memory.apply(changes), 'apply')
          : gate(Promise.resolve(), 'apply').then(() => memory.apply(changes)),
      observe: () =>
        readAtCall
          ? gate(memory.observe(), 'observe')
          : gate(Promise.resolve(), 'observe').then(() => memory.observe()),
    });
    this.lb = new LbReconciler({
      kubeConfig: new KubeConfig(),
      config,
      adapter,
      events: { record: async () => {} },
      state: new StateTracker('c1', 'memory'),
      statusWriter: { write: async () => {} },
      poolIntervalMs: 0,
    });
  }

  view(): ClusterView {
    const { ingresses, ingressClasses } = this;
    return { services, nodes, ingresses, ingressClasses, pods: [...this.pods] };
  }

  pod(i: number, nodePort: number, ready = true): void {
    this.pods[i] = pod(i, nodePort, ready, ++this.rv);
    (this.changed ??= new Set()).add(`default/svc-${i % SERVICES}`);
  }

  /** A pass told what changed since the last one (the first: anything), not awaited. */
  pass(): Promise<unknown> {
    const named = this.rv === 1 && !this.changed ? undefined : (this.changed ?? new Set<string>());
    this.changed = new Set();
    return this.lb.reconcile(this.view(), Date.now, named).catch(() => undefined);
  }

  /**
   * Someone removes a pool of ours on the device; the device is read again: by the next pass
   * (invalidate) or behind the passes (readBehind, the sweep's).
   */
  drift(svc: number, behind = false): void {
    for (const [name, { pool }] of this.memory.device.pools)
      if (pool.service === `default/svc-${svc}`) this.memory.device.pools.delete(name);
    if (behind) this.lb.readBehind();
    else this.lb.invalidate();
  }
}

/**
 * A rig reading and writing the device when asked (readAtCall), each answer held until released by
 * its label ('observe', 'apply'), after a first pass has created everything.
 */
async function heldRig() {
  const held: { label: string; go: () => void }[] = [];
  const rig = new Rig(
    (p, label) => p.then((v) => new Promise((go) => held.push({ label, go: () => go(v) }))),
    true,
  );
  const release = async (label: string) => {
    for (let i = 0; !held.some((h) => h.label === label); i++) {
      if (i > 100) throw new Error(`no ${label} to end`);
      await new Promise((r) => setImmediate(r));
    }
    held
      .splice(
        held.findIndex((h) => h.label === label),
        1,
      )[0]!
      .go();
    await new Promise((r) => setImmediate(r));
  };
  const first = rig.pass();
  await release('observe');
  await release('apply');
  await first;
  return { rig, held, release };
}

describe('the plan scope of overlapping passes', () => {
  it('brings the device to the full build whatever order device calls end in, faults included', async () => {
    let namedRuns = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.scheduler(),
        fc.array(command, { minLength: 1, maxLength: 40 }),
        async (s, commands) => {
          const rig = new Rig((p, label) => s.schedule(p, label));
          // A first pass reads the device and creates everything; the commands start from there.
          const passes = [rig.pass()];
          await s.waitFor(passes[0]!);
          for (const c of commands) {
            if (c.kind === 'pod') rig.pod(c.i, c.nodePort, c.ready);
            else if (c.kind === 'fault') {
              if (c.down) rig.down.add(`default/svc-${c.svc}`);
              else rig.down.delete(`default/svc-${c.svc}`);
            } else if (c.kind === 'drift') rig.drift(c.svc, c.behind);
            // One device call ends, the one the scheduler picks: calls pile up between ticks.
            else if (c.kind === 'tick') await (s.count() > 0 ? s.waitOne() : undefined);
            else passes.push(rig.pass());
          }
          passes.push(rig.pass());
          await s.waitFor(Promise.all(passes));
          // Faults over, Pods still: passes told that nothing changed converge, then write nothing.
          rig.down.clear();
          let left: string[] = [];
          for (let round = 0; round < 6 && (round === 0 || left.length > 0); round++) {
            // Every device call ends first (a sweep's read behind the passes among them).
            await s.waitAll();
            await s.waitFor(rig.pass());
            left = differences(rig.memory, rig.view());
          }
          if (rig.lb.plans.named > 0) namedRuns++;
          assert.deepEqual(left, [], JSON.stringify(s.report().map((r) => r.label)));
          const quiet = rig.lb.reconcile(rig.view(), Date.now, new Set());
          await s.waitFor(quiet);
          assert.deepEqual((await quiet).applied, [], 'nothing more to write');
        },
      ),
      { numRuns: 200 },
    );
    // Not every run gets there (a retryable failure reads the device again: a whole plan), most do.
    assert.ok(namedRuns > 100, `${namedRuns} of 200 runs planned the changed objects only`);
  });

  it('a pass that found a pool equal while an earlier pass was writing it does not settle it', async () => {
    const held: (() => void)[] = [];
    const rig = new Rig((p) => p.then((v) => new Promise((go) => held.push(() => go(v)))));
    const release = async () => {
      for (let i = 0; held.length === 0; i++) {
        if (i > 100) throw new Error('no device call to end');
        await new Promise((r) => setImmediate(r));
      }
      held.shift()!();
      await new Promise((r) => setImmediate(r));
    };
    const first = rig.pass();
    await release(); // observe
    await release(); // creates
    await first;
    // Pass 1 moves pod-0 (svc-0) to 61001; its write waits on the device.
    rig.pod(0, 61001);
    const p1 = rig.pass();
    // Pass 2: pod-0 back to 61000 (svc-0 equals the device, as pass 1 has not written yet), and
    // pod-1 (svc-1) moves, so pass 2 writes too.
    rig.pod(0, 61000);
    rig.pod(1, 61001);
    const p2 = rig.pass();
    await release(); // pass 1's write ends first: the device holds svc-0 at 61001
    await p1;
    await release(); // then pass 2's
    await p2;
    assert.deepEqual(differences(rig.memory, rig.view()), ['pool/c1--default-svc-0-http']);
    // The next pass told nothing changed puts svc-0 back.
    const p3 = rig.pass();
    await release();
    await p3;
    assert.deepEqual(differences(rig.memory, rig.view()), []);
  });

  it('the sweep reads the device again and plans everything: a pool removed behind our back comes back', async () => {
    const rig = new Rig((p) => p);
    await rig.pass();
    rig.drift(0);
    await rig.pass();
    assert.deepEqual(differences(rig.memory, rig.view()), []);
    assert.deepEqual(rig.lb.plans, { whole: 2, named: 0 });
  });
  it("the sweep's read goes behind the passes: a change is applied while it is out, and is on top of it once in", async () => {
    const { rig, held, release } = await heldRig();
    // A pool removed behind our back; the sweep's read starts, sees the device as it is now, and
    // does not answer yet.
    rig.drift(2, true);
    await new Promise((r) => setImmediate(r)); // the read has seen the device
    // A change meanwhile: planned and applied without waiting for the read.
    rig.pod(0, 61001);
    const changed = rig.pass();
    await release('apply');
    const r = (await changed) as { applied: { change: { op: string; name: string } }[] };
    assert.deepEqual(
      r.applied.map((x) => `${x.change.op} ${x.change.name}`),
      ['update c1--default-svc-0-http'],
    );
    assert.deepEqual(
      held.map((h) => h.label),
      ['observe'],
      'the read is still out',
    );
    // The read lands (without the change it began before): the change goes on top, and the whole
    // pass after it restores the removed pool alone, the changed one not written again.
    await release('observe');
    const whole = rig.pass();
    await release('apply');
    const w = (await whole) as { applied: { change: { op: string; name: string } }[] };
    assert.deepEqual(
      w.applied.map((x) => `${x.change.op} ${x.change.name}`),
      ['create c1--default-svc-2-http'],
    );
    assert.deepEqual(differences(rig.memory, rig.view()), []);
    assert.deepEqual(rig.lb.plans.whole, 2, 'the first pass, and the one after the read');

    // A read that lands while a pass planned before it is still writing: that write goes on top
    // of the read in place, and the next pass neither reads the device again nor writes again.
    rig.lb.readBehind();
    await new Promise((r) => setImmediate(r)); // the read has seen the device
    rig.pod(1, 61001);
    const writing = rig.pass();
    await release('observe');
    await release('apply');
    await writing;
    const next = rig.pass();
    for (let i = 0; i < 20; i++) await new Promise((r) => setImmediate(r));
    assert.deepEqual(
      held.map((h) => h.label),
      [],
      'no read of the device again',
    );
    const n = (await next) as { applied: unknown[] };
    assert.deepEqual(n.applied, [], 'nothing written twice');
    assert.deepEqual(differences(rig.memory, rig.view()), []);
  });
  for (const readFirst of [false, true])
    it(`a write issued before the sweep's read, answered ${readFirst ? 'after the read is in' : 'while it is out'}: the device is read again, so a change someone made after the write is seen`, async () => {
      const { rig, held, release } = await heldRig();
      // A write to svc-1's pool is on the device; its answer is slow.
      rig.pod(1, 61001);
      const writing = rig.pass();
      for (let i = 0; i < 10 && !held.some((h) => h.label === 'apply'); i++)
        await new Promise((r) => setImmediate(r));
      // Then someone removes that pool, and the sweep's read begins (it sees the pool gone).
      rig.drift(1, true);
      if (readFirst) {
        // The read is in before the write answers: the write, answered after, is not put on top
        // of it (the read may be newer than the write); the next pass reads the device.
        await release('observe');
        await release('apply');
        await writing;
      } else {
        // The write answers while the read is out: that read is not taken; the next one is.
        await release('apply');
        await writing;
        await release('observe');
        await release('observe');
      }
      const whole = rig.pass();
      // Read first where the read in place could not be trusted (the pass reads it again).
      if (readFirst) await release('observe');
      await release('apply');
      const w = (await whole) as { applied: { change: { op: string; name: string } }[] };
      assert.deepEqual(
        w.applied.map((x) => `${x.change.op} ${x.change.name}`),
        ['create c1--default-svc-1-http'],
        'the pool removed after our write is put back',
      );
      assert.deepEqual(differences(rig.memory, rig.view()), []);
    });
  it("the sweep's read out is waited for at shutdown, a read asked again meanwhile included", async () => {
    const { rig, release } = await heldRig();
    rig.lb.readBehind();
    rig.lb.readBehind(); // asked again while out: another read follows the first
    let done = false;
    const stopped = rig.lb.readsDone().then(() => (done = true));
    await release('observe');
    assert.equal(done, false, 'the second read is out');
    await release('observe');
    await stopped;
    assert.equal(done, true);
  });
});
