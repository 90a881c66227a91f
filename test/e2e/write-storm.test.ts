/**
 * A device outage, bounded and visible (issue 30, item 7): the load balancer answers nothing (reads
 * and writes) for 30 s while Pods churn. The first failed pass opens the circuit breaker: writes
 * are held and one probe a second asks whether the device is back, so the outage costs a bounded
 * number of attempts (a few passes' writes and ~30 probes, not a retry of every change); the
 * controller's Pod gets LoadBalancerUnreachable, `npl_lb_device_reachable` is 0, /readyz is not
 * ready. Once the device answers, the controller converges within 5 s with nothing missing or stale.
 */
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { MemoryAdapter } from '../../adapters/memory/adapter.ts';
import { MemoryLoadBalancer } from '../../adapters/memory/device.ts';
import type { Change } from '../../src/adapter/changes.ts';
import { parseControllerConfig } from '../../src/config/controller-config.ts';
import { NplController } from '../../src/controller/controller.ts';
import { NPL_POD_ANNOTATION } from '../../src/kube/annotations.ts';
import { Cluster, RecordingEvents } from '../support/cluster.ts';
import { eventually, useSandbox } from '../support/sandbox.ts';

const OUTAGE_MS = 30_000;
const PODS = 12;

it('a 30 s device outage while Pods churn: writes held, ~1 probe a second, said on the controller Pod, converged within 5 s of recovery', async (t) => {
  const { kc } = await useSandbox(t);
  const c = new Cluster(kc);
  await c.node('n1', { internal: ['192.0.2.201'] });
  await c.service('web', {
    type: 'LoadBalancer',
    enabled: null,
    ports: [{ name: 'http', port: 80, targetPort: 'http' }],
  });
  const ready = new Map<string, boolean>();
  const setPod = async (i: number, isReady: boolean) => {
    ready.set(`web-${i}`, isReady);
    await c.patchPodStatus(`web-${i}`, {
      metadata: {
        annotations: {
          [NPL_POD_ANNOTATION]: JSON.stringify([
            { podPort: 8080, nodeIP: '192.0.2.201', nodePort: 61000 + i, protocol: 'tcp', ipFamily: 'IPv4' },
          ]),
        },
      },
      status: { phase: 'Running', conditions: [{ type: 'Ready', status: isReady ? 'True' : 'False' }] },
    });
  };
  for (let i = 0; i < 4; i++) {
    await c.pod(`web-${i}`, { node: 'n1', ports: [{ name: 'http', containerPort: 8080 }] });
    await setPod(i, true);
  }
  const device = new MemoryLoadBalancer();
  let down = false;
  /** Writes (one per change) and probes tried while the device was down. */
  let refused = 0;
  let probesDown = 0;
  const unreachable = (): string | undefined => (down ? 'connect ECONNREFUSED (device down)' : undefined);
  class Counting extends MemoryAdapter {
    override async apply(changes: Change[]) {
      if (down) refused += changes.length;
      return super.apply(changes);
    }
    override async probe() {
      if (down) probesDown++;
      return super.probe();
    }
  }
  const events = new RecordingEvents();
  const self = {
    kind: 'Pod',
    apiVersion: 'v1',
    namespace: 'npl-lb',
    name: 'npl-lb-controller-0',
    uid: 'u-self',
  };
  const ctl = new NplController({
    kubeConfig: kc,
    config: parseControllerConfig(
      'clusterName: c1\ndefaultLoadBalancer: true\nvip: {cidrs: [192.0.2.0/24]}\n',
    ),
    adapter: new Counting({ owner: 'c1', device, unreachable }),
    events,
    self,
    coalesceMs: 10,
    sweepIntervalMs: 0,
  });
  t.after(() => ctl.stop());
  await ctl.start();
  const pool = 'c1--default-web-http';
  const onDevice = () =>
    (device.pools.get(pool)?.pool.members ?? [])
      .map((m) => `${m.pod}${m.enabled ? '' : ' draining'}`)
      .sort()
      .join(',');
  const wanted = () =>
    [...ready]
      .map(([name, r]) => `default/${name}${r ? '' : ' draining'}`)
      .sort()
      .join(',');
  await eventually(() => onDevice() === wanted(), 5000, 'first sync');

  // The outage: every write fails for 30 s; Pods come, go ready and unready meanwhile (bounded).
  down = true;
  const until = Date.now() + OUTAGE_MS;
  let next = 4;
  for (let step = 0; Date.now() < until && step < 400; step++) {
    if (step % 5 === 0 && next < PODS) {
      await c.pod(`web-${next}`, { node: 'n1', ports: [{ name: 'http', containerPort: 8080 }] });
      await setPod(next, true);
      next++;
    } else {
      const i = step % next;
      await setPod(i, !ready.get(`web-${i}`));
    }
    await new Promise((r) => setTimeout(r, Math.min(250, Math.max(0, until - Date.now()))));
  }
  assert.notEqual(onDevice(), wanted(), 'the device is behind after the outage');
  // Seen and said: the breaker is open, the Pod has the Warning, the metric and readiness agree.
  assert.equal(ctl.device.reachable, false);
  assert.equal(ctl.isReady, false, '/readyz is not ready while the device does not answer');
  assert.match(await ctl.metrics.registry.metrics(), /^npl_lb_device_reachable 0$/m);
  const warn = events.seen.filter((e) => e.reason === 'LoadBalancerUnreachable');
  assert.equal(warn.length, 1, 'one Warning for the outage, not one per attempt');
  assert.equal(warn[0]!.target, 'npl-lb/npl-lb-controller-0');
  assert.match(warn[0]!.message, /ECONNREFUSED/);
  // Bounded: the writes of the pass that found the device down (and of passes already in
  // flight), then probes only, about one a second.
  t.diagnostic(`during the ${OUTAGE_MS / 1000} s outage: ${refused} writes tried, ${probesDown} probes`);
  assert.ok(refused <= 20, `writes tried during the outage: ${refused}`);
  assert.ok(probesDown >= 20 && probesDown <= 40, `probes during the outage: ${probesDown}`);
  down = false;
  const recovered = Date.now();
  await eventually(() => onDevice() === wanted(), 10_000, 'converged after recovery');
  const took = Date.now() - recovered;
  t.diagnostic(`converged ${took} ms after recovery`);
  assert.ok(took <= 5000, `converged ${took} ms after recovery`);
  assert.equal(ctl.device.reachable, true);
  assert.ok(ctl.isReady);
  assert.match(await ctl.metrics.registry.metrics(), /^npl_lb_device_reachable 1$/m);
  assert.ok(
    events.seen.some(
      (e) => e.reason === 'LoadBalancerReachable' && e.target === 'npl-lb/npl-lb-controller-0',
    ),
  );
  assert.equal(ctl.state.document().device.reachable, true);
  // Nothing stale: exactly the Pods there are, in their last state; the virtual service is there.
  assert.equal(device.pools.get(pool)!.pool.members.length, next);
  assert.ok(device.virtualServices.has('c1--default-web-TCP-80'));
});
