/**
 * Issue 47, item 1, through the controller and the sandbox: a Pod that lists the readiness gate
 * `npl-lb.io/load-balancer-ready` gets it True only once its member is applied on a slow device
 * (1.5 s an apply) and the device's health check has it up, with the kubelet's conditions left as
 * they were (one condition patched); a gated Pod no load balancer selects is True at once
 * (NotLoadBalanced); a member the device's check finds down stays False (MemberDown) and its Pod
 * gets a Warning Event past the threshold; while the device does not answer, a new gated Pod is
 * False (LoadBalancerUnreachable) and the Pods already True stay True; once it answers again, the
 * new Pod's gate opens.
 */
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:net';
import { it, type TestContext } from 'node:test';
import { MemoryAdapter } from '../../adapters/memory/adapter.ts';
import { NplController } from '../../src/controller/controller.ts';
import { parseControllerConfig } from '../../src/config/controller-config.ts';
import { NPL_POD_ANNOTATION } from '../../src/kube/annotations.ts';
import { Cluster, RecordingEvents } from '../support/cluster.ts';
import { api, eventually, useSandbox } from '../support/sandbox.ts';

type Obj = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
const GATE = 'npl-lb.io/load-balancer-ready';
const NODE_IP = '127.0.59.1';
const PODS = '/api/v1/namespaces/default/pods';

async function listen(t: TestContext, port: number): Promise<void> {
  const server: Server = createServer((s) => s.end());
  await new Promise<void>((r) => server.listen(port, NODE_IP, () => r()));
  t.after(() => new Promise<void>((r) => server.close(() => r())));
}

it('the gate opens once the device serves the Pod, never before; says why while it does not', async (t) => {
  const { kc, url } = await useSandbox(t);
  const c = new Cluster(kc);
  await c.node('n1', { internal: [NODE_IP] });
  await c.service('web', {
    type: 'LoadBalancer',
    selector: { app: 'web' },
    ports: [{ name: 'http', port: 80, targetPort: 8080 }],
  });
  let down: string | undefined;
  const adapter = new MemoryAdapter({ owner: 'g', latencyMs: 1500, unreachable: () => down });
  const events = new RecordingEvents();
  const ctl = new NplController({
    kubeConfig: kc,
    config: parseControllerConfig(
      'clusterName: g\ndefaultLoadBalancer: true\nvip: {cidrs: [192.0.2.64/26]}\nhealthIntervalSeconds: 0\nreadinessGateWarnSeconds: 1\n',
    ),
    adapter,
    events,
    coalesceMs: 20,
    sweepIntervalMs: 0,
    deviceProbeMs: 200,
    deviceIdleProbeMs: 200,
  });
  t.after(() => ctl.stop());
  await ctl.start();

  /** A gated Pod whose containers are ready, with the mapping an agent would write. */
  const gatedPod = async (name: string, labels: Record<string, string>, nodePort: number) => {
    const made = await api(url, 'POST', PODS, {
      metadata: { name, labels },
      spec: {
        nodeName: 'n1',
        readinessGates: [{ conditionType: GATE }],
        containers: [{ name: 'c', image: 'x', ports: [{ name: 'http', containerPort: 8080 }] }],
      },
    });
    assert.equal(made.status, 201);
    await c.patchPodStatus(name, {
      metadata: {
        annotations: {
          [NPL_POD_ANNOTATION]: JSON.stringify([
            { podPort: 8080, nodeIP: NODE_IP, nodePort, protocol: 'tcp', ipFamily: 'IPv4' },
          ]),
        },
      },
      status: {
        phase: 'Running',
        conditions: [
          { type: 'ContainersReady', status: 'True', lastTransitionTime: new Date().toISOString() },
          { type: 'Ready', status: 'False', reason: 'ReadinessGatesNotReady' },
        ],
      },
    });
  };
  const pod = async (name: string) => (await api(url, 'GET', `${PODS}/${name}`)).body as Obj;
  const gate = async (name: string): Promise<Obj | undefined> =>
    ((await pod(name)).status?.conditions as Obj[] | undefined)?.find((x) => x.type === GATE);
  const member = (port: number) =>
    [...adapter.device.pools.values()].flatMap((p) => p.pool.members).find((m) => m.port === port);

  await listen(t, 61001);
  await gatedPod('web-1', { app: 'web' }, 61001);
  await gatedPod('lonely', { app: 'nothing-selects-me' }, 61009);
  // At once: with the first pass (its device call takes 1.5 s here), not after a health read. In
  // full runs this once waited past 10 s, then past 30 s: the controller had written True before
  // this test's own status patch (a merge patch, which replaces the conditions) wiped it, and a
  // True was never written again. The writer now writes a removed True again
  // (readiness-gate-writer.ts, REWRITE_AFTER_MS); should this still fail, the controller's counts
  // say where it stood.
  await eventually(
    async () => (await gate('lonely'))?.status === 'True',
    30_000,
    'an unselected Pod is True at once',
  ).catch((err: unknown) => {
    const where = JSON.stringify({
      passes: ctl.stats.lbReconciles,
      deviceReachable: ctl.device.reachable,
      gates: ctl.gates.stats,
      poolsOnDevice: adapter.device.pools.size,
    });
    throw new Error(`${(err as Error).message}; the controller then: ${where}`);
  });
  assert.equal((await gate('lonely'))?.reason, 'NotLoadBalanced');

  // Never True before the device has the member enabled.
  let sawOpen = false;
  await eventually(
    async () => {
      const g = await gate('web-1');
      if (g?.status === 'True') {
        sawOpen = true;
        assert.equal(member(61001)?.enabled, true, 'the device has the member when the gate opens');
        return true;
      }
      return false;
    },
    30_000,
    'web-1 gate True',
  );
  assert.ok(sawOpen);
  const g1 = await gate('web-1');
  assert.equal(g1?.reason, 'MemberReady');
  const conds = ((await pod('web-1')).status.conditions as Obj[]).map((x) => `${x.type}=${x.status}`).sort();
  assert.deepEqual(
    conds,
    ['ContainersReady=True', 'Ready=False', `${GATE}=True`],
    'the kubelet’s conditions untouched',
  );
  // The views show it (npl-lb pools, the dashboard): the member's Pod and its gate.
  await eventually(
    () =>
      ctl.state
        .document()
        .pools.flatMap((p) => p.members)
        .some(
          (m) => m.pod === 'default/web-1' && m.gate?.status === 'True' && m.gate.reason === 'MemberReady',
        ),
    30_000,
    'the gate in the state document',
  );

  // The waits below are bounds on liveness, not on speed: each is 30 s because a CI machine busy
  // with other files has held a step past 10-15 s (the file takes 10 s alone, 15 s beside four
  // CPU burners here).
  // A member the device's check finds down: False, with an Event past the threshold.
  await gatedPod('web-2', { app: 'web' }, 61002);
  await eventually(async () => (await gate('web-2'))?.reason === 'MemberDown', 30_000, 'web-2 MemberDown');
  assert.equal((await gate('web-2'))?.status, 'False');
  await eventually(
    () => events.seen.some((e) => e.reason === 'LoadBalancerGatePending' && e.target === 'default/web-2'),
    30_000,
    'the Warning Event on web-2',
  );

  // The device stops answering: a new gated Pod is False and says why; web-1 stays True.
  down = 'connection refused (test)';
  await eventually(() => !ctl.device.reachable, 30_000, 'device seen down');
  await listen(t, 61003);
  await gatedPod('web-3', { app: 'web' }, 61003);
  await eventually(
    async () => (await gate('web-3'))?.reason === 'LoadBalancerUnreachable',
    30_000,
    'web-3 unreachable',
  );
  assert.equal((await gate('web-1'))?.status, 'True', 'a served Pod is never taken out for an outage');

  down = undefined;
  await eventually(
    async () => (await gate('web-3'))?.status === 'True',
    30_000,
    'web-3 True once the device answers',
  );
  assert.equal(member(61003)?.enabled, true);
  assert.ok(ctl.gates.stats.writes >= 4);
});
