/**
 * Readiness is health, not leadership: two replicas on the sandbox are both Ready, only the leader
 * writes, the standby says who leads (state API, `npl-lb pools`), and a rolling replacement (a
 * new replica comes up Ready, the old leader goes) hands over within the lease duration, with the
 * new leader converging on the load balancer without a single extra write.
 */
import assert from 'node:assert/strict';
import { it, type TestContext } from 'node:test';
import type { KubeConfig } from '@kubernetes/client-node';
import { request } from 'undici';
import { MemoryAdapter } from '../../adapters/memory/adapter.ts';
import { MemoryLoadBalancer } from '../../adapters/memory/device.ts';
import { parseControllerConfig } from '../../src/config/controller-config.ts';
import { type ControllerRole, startControllerRole } from '../../src/main/controller-role.ts';
import { runPools } from '../../src/main/pools.ts';
import { silentLogger } from '../../src/runtime/logger.ts';
import { Cluster, RecordingEvents } from '../support/cluster.ts';
import { eventually, useSandbox } from '../support/sandbox.ts';

const LEASE_MS = 2000;

async function replica(t: TestContext, kc: KubeConfig, device: MemoryLoadBalancer, identity: string) {
  const role = await startControllerRole({
    kubeConfig: kc,
    config: parseControllerConfig(
      'clusterName: c1\ndefaultLoadBalancer: true\nvip: {cidrs: [192.0.2.0/24]}\n',
    ),
    adapter: new MemoryAdapter({ owner: 'c1', device }),
    events: new RecordingEvents(),
    logger: silentLogger(),
    httpAddress: { host: '127.0.0.1', port: 0 },
    election: {
      namespace: 'default',
      name: 'npl-lb-controller',
      identity,
      leaseDurationMs: LEASE_MS,
      renewDeadlineMs: 1500,
      retryPeriodMs: 200,
    },
    coalesceMs: 10,
    sweepIntervalMs: 0,
  });
  let stopped = false;
  const stop = async () => {
    if (stopped) return;
    stopped = true;
    await role.stop();
  };
  t.after(stop);
  await role.start();
  return { role, stop };
}

const readyz = async (r: ControllerRole) => (await request(`${r.url}/readyz`)).statusCode;
const state = async (r: ControllerRole) =>
  (await (await request(`${r.url}/api/v1/state`)).body.json()) as {
    leadership: { role: string; holder: string; since: string | null };
    pools: unknown[];
  };

it('two replicas are both Ready; a rolling replacement hands over and converges with 0 extra writes', async (t) => {
  const { kc } = await useSandbox(t);
  const c = new Cluster(kc);
  await c.node('n1', { internal: ['192.0.2.201'] });
  await c.service('web', {
    type: 'LoadBalancer',
    enabled: null,
    ports: [{ name: 'http', port: 80, targetPort: 'http' }],
  });
  await c.nplPod('web-1', { node: 'n1', entries: [{ nodeIP: '192.0.2.201', nodePort: 61000 }] });
  const device = new MemoryLoadBalancer();
  const a = await replica(t, kc, device, 'replica-a');
  await eventually(() => a.role.controller.isReady, 5000, 'a leads and syncs');
  const b = await replica(t, kc, device, 'replica-b');
  await eventually(() => device.virtualServices.has('c1--default-web-TCP-80'), 5000, 'the leader wrote');
  await eventually(async () => (await readyz(b.role)) === 200, 3000, 'the standby is Ready');
  assert.equal(await readyz(a.role), 200, 'the leader is Ready');
  assert.equal(b.role.controller.isReady, false, 'the standby runs no controller');
  await eventually(
    async () => (await state(b.role)).leadership.holder !== '',
    3000,
    'the standby read the Lease',
  );
  const standby = await state(b.role);
  assert.equal(standby.leadership.role, 'standby');
  assert.equal(standby.leadership.holder, 'replica-a');
  assert.ok(standby.leadership.since, 'since when');
  assert.equal((await state(a.role)).leadership.role, 'leader');
  const metric = async (r: ControllerRole) => {
    const text = await (await request(`${r.url}/metrics`)).body.text();
    return {
      leader: /^npl_lb_leader (\d)/m.exec(text)?.[1],
      build: /^npl_lb_build_info\{version="([^"]+)",component="controller"/m.exec(text)?.[1],
      process: /^process_resident_memory_bytes \d+/m.test(text),
    };
  };
  assert.deepEqual(await metric(a.role), { leader: '1', build: '0.1.0', process: true });
  assert.deepEqual(await metric(b.role), { leader: '0', build: '0.1.0', process: true });
  let printed = '';
  await runPools(['--server', b.role.url], (s) => (printed += s));
  assert.match(printed, /^standby: this replica does not write; the leader is replica-a since /);

  // The rollout: a new replica comes up (Ready as a standby), then the old leader goes.
  const writes = device.writes.length;
  const c2 = await replica(t, kc, device, 'replica-c');
  await eventually(async () => (await readyz(c2.role)) === 200, 3000, 'the new replica is Ready');
  const handover = Date.now();
  await a.stop();
  const leader = () => [b.role, c2.role].find((r) => r.controller.isReady);
  await eventually(() => leader() !== undefined, LEASE_MS + 1000, 'a standby leads');
  const took = Date.now() - handover;
  assert.ok(took <= LEASE_MS, `handed over in ${took} ms (lease ${LEASE_MS} ms)`);
  await leader()!.controller.settled();
  assert.equal(device.writes.length, writes, 'the new leader converged with 0 extra writes');
  assert.equal((await state(leader()!)).leadership.role, 'leader');
  t.diagnostic(`handover took ${took} ms`);
});
