/**
 * Health from the device follows a backend that stops and starts, on a real HAProxy (runtime
 * socket and Data Plane API v2 and v3, HAProxy's own checks) and on the Avi and BIG-IP simulators
 * (their TCP monitors): the state API and `npl-lb pools` (run as a process once) show it, with our
 * admin intent beside it. Backends are TCP servers at loopback nodeIP:nodePort, as the NodePortLocal
 * annotation names them.
 */
import assert from 'node:assert/strict';
import type { Server } from 'node:net';
import { describe, it, type TestContext } from 'node:test';
import { AviAdapter } from '../../adapters/avi/adapter.ts';
import { AviSimulator } from '../../sim/avi/simulator.ts';
import { F5Adapter } from '../../adapters/f5/adapter.ts';
import { BigIpSimulator } from '../../sim/f5/simulator.ts';
import type { LoadBalancerAdapter } from '../../src/adapter/contract.ts';
import { parseControllerConfig } from '../../src/config/controller-config.ts';
import { NplController } from '../../src/controller/controller.ts';
import { NPL_POD_ANNOTATION } from '../../src/kube/annotations.ts';
import { run, runCli, CLI, ROOT } from '../support/cli-process.ts';
import { closeServer, serveController, tcpBackend } from '../support/controller-http.ts';
import { Cluster } from '../support/cluster.ts';
import { startDataplaneSim } from '../support/dataplane.ts';
import { haproxyMissing, startHaproxy } from '../support/haproxy.ts';
import { eventually, useSandbox } from '../support/sandbox.ts';

type Kind = 'runtime' | 'dataplane-v2' | 'dataplane-v3' | 'avi' | 'f5';

async function adapterFor(t: TestContext, kind: Kind): Promise<LoadBalancerAdapter> {
  if (kind === 'runtime') return (await startHaproxy(t)).adapter('hc', { healthChecks: true });
  if (kind === 'dataplane-v2' || kind === 'dataplane-v3') {
    return (await startDataplaneSim(t)).adapter('hc', kind === 'dataplane-v2' ? 'v2' : 'v3', {
      slots: 4,
      healthChecks: true,
      transparentBinds: false,
    });
  }
  if (kind === 'avi') {
    const sim = new AviSimulator();
    const url = await sim.start();
    const a = new AviAdapter({
      owner: 'hc',
      url,
      username: 'admin',
      password: 'admin',
      version: '22.1.3',
      tenant: 'admin',
    });
    t.after(async () => {
      await a.close();
      await sim.close();
    });
    return a;
  }
  const sim = new BigIpSimulator();
  const url = await sim.start();
  const a = new F5Adapter({ owner: 'hc', url, username: 'admin', password: 'admin' });
  t.after(async () => {
    await a.close();
    await sim.close();
  });
  return a;
}

const scenario =
  (kind: Kind, index: number, viaProcess = false) =>
  async (t: TestContext): Promise<void> => {
    const { kc } = await useSandbox(t);
    const c = new Cluster(kc);
    const net = `127.0.${50 + index}`;
    const nodes = { n1: `${net}.1`, n2: `${net}.2` };
    for (const [name, ip] of Object.entries(nodes)) await c.node(name, { internal: [ip] });
    const backends = new Map<string, Server>();
    for (const [name, ip] of Object.entries(nodes)) backends.set(name, await tcpBackend(ip, 46000));
    t.after(async () => {
      for (const s of backends.values()) await closeServer(s);
    });
    const adapter = await adapterFor(t, kind);
    const ctl = new NplController({
      kubeConfig: kc,
      config: parseControllerConfig(
        `clusterName: hc\ndefaultLoadBalancer: true\nvip: {cidrs: [${net}.64/26]}\nhealthIntervalSeconds: 1\n`,
      ),
      adapter,
      events: { record: async () => {} },
      coalesceMs: 20,
      sweepIntervalMs: 0,
    });
    t.after(() => ctl.stop());
    await ctl.start();
    const url = await serveController(t, ctl);

    await c.service('web', {
      type: 'LoadBalancer',
      ports: [{ name: 'tcp', port: 18090 + index, targetPort: 8080 }],
    });
    for (const [i, [node, ip]] of Object.entries(nodes).entries()) {
      const name = `web-${i + 1}`;
      await c.pod(name, { node, ips: [`10.244.0.${i + 1}`], ports: [{ containerPort: 8080 }] });
      await c.patchPodStatus(name, {
        metadata: {
          annotations: {
            [NPL_POD_ANNOTATION]: JSON.stringify([
              { podPort: 8080, nodeIP: ip, nodePort: 46000, protocol: 'tcp', ipFamily: 'IPv4' },
            ]),
          },
        },
        status: { conditions: [{ type: 'Ready', status: 'True' }] },
      });
    }
    const health = () =>
      Object.fromEntries(
        ctl.state
          .document()
          .pools.flatMap((p) => p.members)
          .map((m) => [m.node, m.health?.state ?? 'not read']),
      );
    const pools = async () => {
      const args = ['pools', '--server', url, '-o', 'wide'];
      if (viaProcess) return (await run(process.execPath, [...CLI, ...args], { cwd: ROOT })).stdout;
      const { runPools } = await import('../../src/main/pools.ts');
      let out = '';
      await runPools(args.slice(1), (s) => (out += s));
      return out;
    };
    // HAProxy's checks are 2 s apart, with rise 2 and fall 3: allow for them.
    await eventually(() => health().n1 === 'up' && health().n2 === 'up', 20_000, 'both members up');
    assert.match(
      await pools(),
      new RegExp(
        `\\nn2\\s+${net.replaceAll('.', '\\.')}\\.2:46000\\s+default/web-2\\s+enabled\\s+up\\s+enabled\\s`,
      ),
    );
    assert.equal(ctl.state.document().health.supported, true);
    assert.equal(ctl.state.document().health.error, null);

    // n2's backend stops: the device's check says down; our intent stays enabled.
    await closeServer(backends.get('n2')!);
    await eventually(() => health().n2 === 'down', 20_000, "n2's member down");
    assert.equal(health().n1, 'up');
    const member = ctl.state.document().pools[0]!.members.find((m) => m.node === 'n2')!;
    assert.equal(member.enabled, true, 'health is the device view, not our intent');
    assert.match(await pools(), /\nn2\s+\S+:46000\s+default\/web-2\s+enabled\s+down\s/);
    if (viaProcess) {
      // As a person types it: a node that serves nothing is exit code 1 and names the nodes.
      const bad = await runCli(['pools', '--server', url, '--node', 'n9']);
      assert.equal(bad.code, 1);
      assert.match(
        bad.stderr,
        /^npl-lb: no node "n9" serves any pool; nodes: n1, n2 \[NPL_UNKNOWN_NODE\]\n$/,
      );
      const impact = await run(
        process.execPath,
        [...CLI, 'pools', '--server', url, '--node', 'n1', '--impact'],
        {
          cwd: ROOT,
        },
      );
      assert.match(
        impact.stdout,
        /losing node n1: 1 virtual service\(s\) lose members, 1 would have none left/,
      );
    }
    const impact = await fetch(`${url}/api/v1/dashboard`).then(
      (r) =>
        r.json() as Promise<{
          impact: { node: string; virtualServices: { lose: number; of: number; noneLeft: boolean }[] }[];
        }>,
    );
    assert.deepEqual(
      impact.impact.find((i) => i.node === 'n1')!.virtualServices.map((v) => [v.lose, v.of, v.noneLeft]),
      [[1, 1, true]],
      'with n2 down, losing n1 leaves the VIP with no member',
    );

    // It starts again: up again, and an on-demand read gives it at once.
    backends.set('n2', await tcpBackend(nodes.n2, 46000));
    await eventually(
      async () => {
        const r = await fetch(`${url}/api/v1/health/refresh`, { method: 'POST' });
        assert.equal(r.status, 200);
        await r.body?.cancel();
        return health().n2 === 'up';
      },
      20_000,
      "n2's member up again",
    );
  };

const kinds: Kind[] = ['runtime', 'dataplane-v2', 'dataplane-v3', 'avi', 'f5'];
describe('health from the device follows a backend that stops and starts', () => {
  for (const [i, kind] of kinds.entries()) {
    const needsHaproxy = kind === 'runtime' || kind.startsWith('dataplane');
    it(kind, { skip: needsHaproxy && haproxyMissing() }, scenario(kind, i, kind === 'avi'));
  }
});
