/**
 * Issue 47, item 1: the readiness gate's verdicts (pure) and its writer (a recording sink). Each
 * reason from its state: not load-balanced (True at once), containers not ready (nothing),
 * unreachable, member not applied or disabled, health pending, down, and ready; True is sticky.
 * The writer patches one condition, keeps the transition time while the status holds, writes a
 * Pod once with its latest verdict, bounds its rate, says a gate False too long once, and keeps
 * going past a failed write.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { type GateInputs, gateChangesFor, LB_READY_GATE } from '../../../src/controller/readiness-gate.ts';
import { type PodCondition, ReadinessGateWriter } from '../../../src/controller/readiness-gate-writer.ts';
import { podSchema, serviceSchema } from '../../../src/kube/objects.ts';
import { podServes } from '../../../src/kube/pod-ports.ts';
import { silentLogger } from '../../../src/runtime/logger.ts';
import type { Pool } from '../../../src/model/types.ts';

const pod = (
  name: string,
  opts: { gated?: boolean; containersReady?: boolean; gate?: string; labels?: Record<string, string> } = {},
) =>
  podSchema.parse({
    metadata: { name, namespace: 'default', uid: `uid-${name}`, labels: opts.labels ?? { app: 'web' } },
    spec: {
      containers: [{ name: 'c' }],
      readinessGates: opts.gated === false ? [] : [{ conditionType: LB_READY_GATE }],
    },
    status: {
      conditions: [
        {
          type: 'ContainersReady',
          status: opts.containersReady === false ? 'False' : 'True',
          lastTransitionTime: '2026-11-28T10:00:00Z',
        },
        { type: 'Ready', status: 'False' },
        ...(opts.gate
          ? [
              {
                type: LB_READY_GATE,
                status: opts.gate,
                reason: 'MemberNotApplied',
                message: 'x',
                lastTransitionTime: '2026-11-28T10:00:01Z',
              },
            ]
          : []),
      ],
    },
  });

const web = serviceSchema.parse({
  metadata: { name: 'web', namespace: 'default' },
  spec: { type: 'LoadBalancer', selector: { app: 'web' }, ports: [{ port: 80 }] },
});
const pool = (enabled: boolean): Pool => ({
  name: 'c1--default-web-80',
  service: 'default/web',
  servicePort: '80',
  protocol: 'TCP',
  health: 'tcp',
  members: [{ address: '192.0.2.1', port: 61000, node: 'n1', pod: 'default/p1', enabled }],
});
const inputs = (o: Partial<GateInputs> = {}): GateInputs => ({
  pools: [pool(true)],
  servicesIn: (ns) => (ns === 'default' ? [web] : []),
  loadBalanced: () => false,
  observed: () => pool(true),
  healthSupported: false,
  reachable: true,
  ...o,
});
const verdict = (p: ReturnType<typeof pod>, i: GateInputs) => gateChangesFor([p], i).verdicts[0]?.verdict;

describe('readiness gate verdicts', () => {
  it('a gated Pod with containers ready serves (the load balancer cannot wait for its Ready)', () => {
    assert.equal(podServes(pod('p1')), true);
    assert.equal(podServes(pod('p1', { containersReady: false })), false);
    assert.equal(podServes(pod('p1', { gated: false })), false, 'ungated: Ready decides');
  });

  it('each reason from its state', () => {
    assert.equal(verdict(pod('lonely', { labels: { app: 'other' } }), inputs())?.reason, 'NotLoadBalanced');
    assert.equal(verdict(pod('lonely', { labels: { app: 'other' } }), inputs())?.status, 'True');
    assert.equal(verdict(pod('p1', { containersReady: false }), inputs()), undefined, 'nothing to say yet');
    assert.equal(verdict(pod('p1'), inputs({ reachable: false }))?.reason, 'LoadBalancerUnreachable');
    assert.equal(verdict(pod('p1'), inputs({ observed: () => undefined }))?.reason, 'MemberNotApplied');
    assert.equal(verdict(pod('p1'), inputs({ observed: () => pool(false) }))?.reason, 'MemberNotApplied');
    assert.equal(
      verdict(pod('p1'), inputs({ pools: [{ ...pool(true), members: [] }] }))?.reason,
      'MemberNotApplied',
      'selected, no mapping yet',
    );
    const h = (state?: 'up' | 'down') => inputs({ healthSupported: true, health: () => state });
    assert.equal(verdict(pod('p1'), h())?.reason, 'MemberHealthPending');
    assert.equal(gateChangesFor([pod('p1')], h()).waitingOnHealth, true);
    assert.equal(verdict(pod('p1'), h('down'))?.reason, 'MemberDown');
    // A read since the pool was written that does not list the member: the device does not report
    // on it, nothing to wait for.
    assert.equal(verdict(pod('p1'), { ...h(), healthReadSince: () => true })?.status, 'True');
    assert.equal(verdict(pod('p1'), { ...h(), healthReadSince: () => false })?.reason, 'MemberHealthPending');
    assert.deepEqual(
      [verdict(pod('p1'), h('up'))?.status, verdict(pod('p1'), h('up'))?.reason],
      ['True', 'MemberReady'],
    );
    assert.equal(verdict(pod('p1'), inputs())?.status, 'True');
  });

  it('selected before its pools are built: a Service npl-lb load-balances counts, another does not', () => {
    const noPools = inputs({ pools: [] });
    assert.equal(verdict(pod('p1'), noPools)?.reason, 'NotLoadBalanced', 'a Service that is not ours');
    assert.equal(verdict(pod('p1'), { ...noPools, loadBalanced: () => true })?.reason, 'MemberNotApplied');
  });

  it('True is sticky: an outage never takes a served Pod out of its endpoints', () => {
    assert.deepEqual(
      gateChangesFor([pod('p1', { gate: 'True' })], inputs({ reachable: false })).verdicts,
      [],
    );
  });

  it('an ungated Pod, and an unchanged False, are not written', () => {
    assert.deepEqual(gateChangesFor([pod('p1', { gated: false })], inputs()).verdicts, []);
    const same = pod('p1', { gate: 'False' });
    same.status.conditions[2]!.message = verdict(pod('p1'), inputs({ observed: () => undefined }))!.message;
    const v = gateChangesFor([same], inputs({ observed: () => undefined })).verdicts;
    assert.deepEqual(
      v.map((x) => x.changed),
      [false],
    );
  });
});

describe('readiness gate writer', () => {
  const rig = (
    fail?: (name: string) => boolean,
    o: { warnAfterMs?: number; writesPerSecond?: number } = {},
  ) => {
    const writes: { name: string; c: PodCondition }[] = [];
    const events: string[] = [];
    const latencies: number[] = [];
    let now = Date.parse('2026-11-28T10:00:05Z');
    const w = new ReadinessGateWriter({
      sink: {
        write: async (_ns, name, c) => {
          if (fail?.(name)) throw new Error('API server down');
          writes.push({ name, c });
          return true;
        },
      },
      events: {
        record: async (t, type, reason, message) =>
          void events.push(`${type} ${reason} ${t.kind}/${t.name}: ${message}`),
      },
      log: silentLogger(),
      onLatency: (s) => latencies.push(s),
      now: () => now,
      ...o,
    });
    return { w, writes, events, latencies, tick: (ms: number) => (now += ms) };
  };

  it('patches one condition, True with its latency; the transition time holds while the status does', async () => {
    const r = rig();
    r.w.update([pod('p1', { gate: 'False' })], inputs({ observed: () => pool(false) }));
    await r.w.idle();
    assert.equal(r.writes.length, 1);
    assert.equal(r.writes[0]!.c.type, LB_READY_GATE);
    assert.equal(
      r.writes[0]!.c.lastTransitionTime,
      '2026-11-28T10:00:01Z',
      'still False: the time it became False',
    );
    r.w.update([pod('p1', { gate: 'False' })], inputs());
    await r.w.idle();
    assert.equal(r.writes[1]!.c.status, 'True');
    assert.equal(r.writes[1]!.c.lastTransitionTime, '2026-11-28T10:00:05.000Z');
    assert.deepEqual(r.latencies, [5], 'containers ready at 10:00:00, True at 10:00:05');
    // Written True: not again, even before the cache shows it.
    r.w.update([pod('p1', { gate: 'False' })], inputs());
    await r.w.idle();
    assert.equal(r.writes.length, 2);
  });

  it('a True removed from the Pod (its status written whole) is written True again once the cache had time, never False', async () => {
    const r = rig();
    r.w.update([pod('p1', { gate: 'False' })], inputs());
    await r.w.idle();
    assert.deepEqual(
      r.writes.map((x) => x.c.status),
      ['True'],
    );
    // The cache lags: the Pod without the condition a second later is not written again.
    r.tick(1000);
    r.w.update([pod('p1')], inputs({ reachable: false }));
    await r.w.idle();
    assert.equal(r.writes.length, 1);
    // Six seconds on it still has none: someone removed it; True again, though the device is down.
    r.tick(5000);
    r.w.update([pod('p1')], inputs({ reachable: false }));
    await r.w.idle();
    assert.deepEqual(
      r.writes.map((x) => x.c.status),
      ['True', 'True'],
    );
    assert.equal(r.w.stats.rewrites, 1);
    assert.equal(r.w.unconfirmed, true, 'the controller keeps looking until the cache shows it');
    // Once the cache shows True, nothing more.
    r.tick(10_000);
    r.w.update([pod('p1', { gate: 'True' })], inputs({ reachable: false }));
    await r.w.idle();
    assert.equal(r.writes.length, 2);
    assert.equal(r.w.unconfirmed, false);
  });

  it('a Pod whose verdict changes while queued is written once, with the latest; the rate is bounded', async () => {
    const r = rig(undefined, { writesPerSecond: 5 });
    const pods = Array.from({ length: 12 }, (_, i) => pod(`q${i}`, { labels: { app: 'none' } }));
    const t0 = performance.now();
    r.w.update(pods, inputs());
    r.w.update(pods, inputs());
    await r.w.idle();
    assert.equal(r.writes.length, 12, 'once each');
    assert.ok(performance.now() - t0 >= 1500, '12 writes at 5 a second take more than two intervals');
  });

  it('a gate False past the threshold is said once on its Pod; a failed write is retried by the next update', async () => {
    const r = rig((n) => n === 'bad', { warnAfterMs: 60_000 });
    const i = inputs({ observed: () => undefined });
    r.w.update([pod('p1')], i);
    r.tick(61_000);
    r.w.update([pod('p1')], i);
    r.w.update([pod('p1')], i);
    await r.w.idle();
    assert.equal(
      r.events.filter((e) => e.includes('LoadBalancerGatePending') && e.includes('Pod/p1')).length,
      1,
    );
    assert.match(r.events[0]!, /MemberNotApplied/);
    r.w.update([pod('bad')], i);
    await r.w.idle();
    assert.equal(r.w.stats.failures, 1);
    r.w.update([pod('bad')], i);
    await r.w.idle();
    assert.equal(r.w.stats.failures, 2, 'queued again, not lost');
  });
});
