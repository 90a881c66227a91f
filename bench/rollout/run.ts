/**
 * Issue 47, item 6: rollouts and node drains measured per vendor, with the readiness gate and
 * without it, side by side in one run. The sandbox runs the Deployment (`--workloads`: rolling
 * updates paced by maxSurge 1 / maxUnavailable 0, graceful deletion with a 5 s preStop sleep, Ready
 * waiting for the gate); the bench's app runner gives each Pod a real HTTP server on its Node's
 * loopback address and the NodePortLocal annotation; the controller programs the device.
 *
 * - HAProxy (runtime transport, and the Data Plane API v3 on the simulator): 40 requests a second
 *   through the VIP, a new connection each, during the change; how many failed.
 * - BIG-IP (the simulator at 8 s a declaration) and Avi (the simulator at 2 s a call, its pool
 *   read from the simulator's store): the device's pool read every 200 ms; how long no enabled
 *   member of the pool reached a live Pod (its server listening).
 * Actions: a rolling update of 3 Pods (a template change, as `kubectl rollout restart`), and a
 * node drain (n2 cordoned, its Pods deleted one by one, each once the Deployment is back at 3
 * available, as `kubectl drain` with a PodDisruptionBudget of maxUnavailable 1 evicts them).
 * Bounded: every wait has a deadline; the whole run aborts after 15 minutes. Loopback only.
 *
 *   npm run bench:rollout [-- --only haproxy-runtime,f5,avi --actions rollout,drain]
 */
import { parseArgs } from 'node:util';
import { KubeConfig } from '@kubernetes/client-node';
import { Agent, request } from 'undici';
import { AviAdapter } from '../../adapters/avi/adapter.ts';
import { F5Adapter } from '../../adapters/f5/adapter.ts';
import { poolServerTargets } from '../../sim/avi/runtime-servers.ts';
import { AviSimulator } from '../../sim/avi/simulator.ts';
import { BigIpSimulator } from '../../sim/f5/simulator.ts';
import type { LoadBalancerAdapter } from '../../src/adapter/contract.ts';
import { parseControllerConfig } from '../../src/config/controller-config.ts';
import { NplController } from '../../src/controller/controller.ts';
import { renderKubeconfig } from '../../src/sandbox/kubeconfig.ts';
import { startSandbox } from '../../src/sandbox/server.ts';
import { TRANSPORTS } from '../../test/support/haproxy-transports.ts';
import { AppRunner } from './app-runner.ts';

const { values } = parseArgs({
  options: {
    only: { type: 'string', default: 'haproxy-runtime,haproxy-dataplane,f5,avi' },
    actions: { type: 'string', default: 'rollout,drain' },
    rps: { type: 'string', default: '40' },
    'declaration-ms': { type: 'string', default: '8000' },
    'avi-call-ms': { type: 'string', default: '2000' },
  },
});
const RPS = Number(values.rps);
const DECLARATION_MS = Number(values['declaration-ms']);
const AVI_CALL_MS = Number(values['avi-call-ms']);
const PRESTOP_S = 5;
const NODES = { n1: '127.0.60.1', n2: '127.0.60.2' };
const SVC_PORT = 18080;
const deadline = setTimeout(() => {
  console.error('benchmark exceeded 15 minutes; aborting');
  process.exit(1);
}, 900_000);
deadline.unref();

type Obj = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
type Vendor = 'haproxy-runtime' | 'haproxy-dataplane' | 'f5' | 'avi';
type Action = 'rollout' | 'drain';

interface Figures {
  vendor: Vendor;
  gate: boolean;
  action: Action;
  seconds: number;
  requests: number;
  failed: number;
  /** ms with no enabled member reaching a live Pod (device sampled every 200 ms); -1: not sampled. */
  noLiveMs: number;
  samples: number;
  /** LoadBalancerUnreachable Events the controller said (the device taken for dead). */
  unreachable: number;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Waits for `check`; on time out, throws with `state()` (what the cluster looked like). */
async function until(
  what: string,
  ms: number,
  check: () => Promise<boolean>,
  state?: () => Promise<string>,
): Promise<void> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (await check().catch(() => false)) return;
    await sleep(100);
  }
  throw new Error(`timed out after ${ms} ms waiting for ${what}: ${(await state?.().catch(() => '')) ?? ''}`);
}

async function one(vendor: Vendor, gate: boolean, action: Action): Promise<Figures> {
  const cleanups: (() => Promise<void>)[] = [];
  const t = { after: (fn: () => Promise<void>) => void cleanups.push(fn) };
  try {
    const sandbox = await startSandbox({ workloads: true });
    t.after(() => sandbox.close());
    const url = sandbox.url;
    const http = new Agent({ connections: 8 });
    t.after(() => http.close());
    const call = async (method: string, path: string, body?: unknown, type = 'application/json') => {
      const r = await request(`${url}${path}`, {
        method: method as 'GET',
        dispatcher: http,
        headers: { 'content-type': type },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
      const text = await r.body.text();
      if (r.statusCode >= 300) throw new Error(`${method} ${path}: ${r.statusCode} ${text.slice(0, 200)}`);
      return JSON.parse(text) as Obj;
    };
    for (const [name, ip] of Object.entries(NODES)) {
      await call('POST', '/api/v1/nodes', { metadata: { name } });
      await call(
        'PATCH',
        `/api/v1/nodes/${name}/status`,
        {
          status: {
            addresses: [{ type: 'InternalIP', address: ip }],
            conditions: [{ type: 'Ready', status: 'True' }],
          },
        },
        'application/merge-patch+json',
      );
    }
    const runner = new AppRunner(url, 'default', NODES, 61000);
    runner.start();
    t.after(() => runner.stop());

    // The device, and a way to read its pool.
    let adapter: LoadBalancerAdapter;
    let readPool: (() => Promise<{ port: number; enabled: boolean }[]>) | undefined;
    if (vendor === 'f5') {
      const sim = new BigIpSimulator({ latencyMs: DECLARATION_MS });
      const simUrl = await sim.start();
      t.after(() => sim.close());
      const opts = { owner: 'e2e', url: simUrl, username: 'admin', password: 'admin', taskPollMs: 50 };
      adapter = new F5Adapter(opts);
      const reader = new F5Adapter(opts);
      t.after(() => reader.close());
      readPool = async () => (await reader.observe()).owned.pools.flatMap((p) => p.members);
    } else if (vendor === 'avi') {
      // Every call answered after AVI_CALL_MS (a busy controller); the pool is read from the
      // simulator's own store, as a read through its API would take as long.
      const sim = new AviSimulator();
      sim.faults.latencyMs = AVI_CALL_MS;
      const simUrl = await sim.start();
      t.after(() => sim.close());
      adapter = new AviAdapter({
        owner: 'e2e',
        url: simUrl,
        username: 'admin',
        password: 'admin',
        version: '22.1.3',
        tenant: 'admin',
      });
      readPool = async () =>
        [...sim.objects('pool').values()].flatMap((pool) =>
          poolServerTargets(pool).map((x) => ({ port: x.port, enabled: x.server.enabled !== false })),
        );
    } else {
      const tr = TRANSPORTS.find(
        (x) => x.name === (vendor === 'haproxy-runtime' ? 'runtime transport' : 'Data Plane API v3'),
      )!;
      adapter = (await tr.start(t, 4)).adapter;
    }
    let unreachable = 0;
    // The cluster name is the adapters' owner (the HAProxy rigs own as `e2e`).
    const controller = new NplController({
      kubeConfig: (() => {
        const kc = new KubeConfig();
        kc.loadFromString(renderKubeconfig({ server: url }));
        return kc;
      })(),
      config: parseControllerConfig(
        'clusterName: e2e\ndefaultLoadBalancer: true\nvip: {cidrs: [127.0.60.64/28]}\nhealthIntervalSeconds: 1\ndrainSeconds: 5\n',
      ),
      adapter,
      events: {
        record: async (_t, _type, reason) => {
          if (reason === 'LoadBalancerUnreachable') unreachable++;
        },
      },
      coalesceMs: 20,
      sweepIntervalMs: 0,
    });
    t.after(() => controller.stop());
    await controller.start();

    await call('POST', '/api/v1/namespaces/default/services', {
      metadata: { name: 'web', annotations: { 'nodeportlocal.antrea.io/enabled': 'true' } },
      spec: {
        type: 'LoadBalancer',
        selector: { app: 'web' },
        ports: [{ name: 'http', port: SVC_PORT, targetPort: 8080 }],
      },
    });
    await call('POST', '/apis/apps/v1/namespaces/default/deployments', {
      metadata: { name: 'web' },
      spec: {
        replicas: 3,
        strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: 1, maxUnavailable: 0 } },
        selector: { matchLabels: { app: 'web' } },
        template: {
          metadata: { labels: { app: 'web' } },
          spec: {
            ...(gate ? { readinessGates: [{ conditionType: 'npl-lb.io/load-balancer-ready' }] } : {}),
            terminationGracePeriodSeconds: 30,
            containers: [
              {
                name: 'web',
                image: 'web:1',
                ports: [{ name: 'http', containerPort: 8080 }],
                lifecycle: { preStop: { sleep: { seconds: PRESTOP_S } } },
              },
            ],
          },
        },
      },
    });
    const deployment = () => call('GET', '/apis/apps/v1/namespaces/default/deployments/web');
    const pods = async () => ((await call('GET', '/api/v1/namespaces/default/pods')).items ?? []) as Obj[];
    const settled = async () => {
      const d = await deployment();
      const ps = await pods();
      return (
        d.status?.updatedReplicas === 3 &&
        d.status?.availableReplicas === 3 &&
        ps.length === 3 &&
        ps.every((p) => !p.metadata.deletionTimestamp && runner.live(nodePort(p)))
      );
    };
    const nodePort = (p: Obj): number => {
      try {
        return Number(
          JSON.parse(p.metadata.annotations?.['nodeportlocal.antrea.io'] ?? '[]')[0]?.nodePort ?? 0,
        );
      } catch {
        return 0;
      }
    };
    let vip = '';
    const state = async () =>
      JSON.stringify(
        (await pods()).map((p) => [
          p.metadata.name,
          p.metadata.deletionTimestamp ? 'terminating' : '',
          nodePort(p),
          runner.live(nodePort(p)),
          (p.status?.conditions ?? []).map(
            (c: Obj) => `${c.type}=${c.status}${c.reason ? `(${c.reason})` : ''}`,
          ),
        ]),
      );
    await until(
      'the VIP and three served Pods',
      120_000,
      async () => {
        vip =
          (await call('GET', '/api/v1/namespaces/default/services/web')).status?.loadBalancer?.ingress?.[0]
            ?.ip ?? '';
        if (!vip || !(await settled())) return false;
        if (!readPool) return (await probe(vip)) === 200;
        return (await readPool()).filter((m) => m.enabled && runner.live(m.port)).length === 3;
      },
      state,
    );

    // Load (HAProxy) and sampling (BIG-IP) while the action runs.
    let requests = 0;
    let failed = 0;
    let noLiveMs = readPool ? 0 : -1;
    let samples = 0;
    let stop = false;
    const load = readPool
      ? Promise.resolve()
      : (async () => {
          const inflight: Promise<void>[] = [];
          const start = Date.now();
          while (!stop) {
            const due = start + (requests * 1000) / RPS;
            if (Date.now() < due) await sleep(due - Date.now());
            requests++;
            inflight.push(
              probe(vip).then((s) => {
                if (s !== 200) failed++;
              }),
            );
          }
          await Promise.all(inflight);
        })();
    const sample = readPool
      ? (async () => {
          let last = Date.now();
          while (!stop) {
            const members = await readPool!().catch(() => undefined);
            const now = Date.now();
            if (members && members.filter((m) => m.enabled && runner.live(m.port)).length === 0)
              noLiveMs += now - last;
            samples++;
            last = now;
            await sleep(Math.max(0, 200 - (Date.now() - now)));
          }
        })()
      : Promise.resolve();

    const t0 = Date.now();
    if (action === 'rollout') {
      await call(
        'PATCH',
        '/apis/apps/v1/namespaces/default/deployments/web',
        {
          spec: {
            template: {
              metadata: { annotations: { 'kubectl.kubernetes.io/restartedAt': new Date().toISOString() } },
            },
          },
        },
        'application/strategic-merge-patch+json',
      );
      await sleep(500);
      await until('the rollout', 300_000, settled, state);
    } else {
      await call(
        'PATCH',
        '/api/v1/nodes/n2',
        { spec: { unschedulable: true } },
        'application/merge-patch+json',
      );
      for (;;) {
        const on = (await pods()).filter((p) => p.spec.nodeName === 'n2' && !p.metadata.deletionTimestamp);
        if (on.length === 0) break;
        await call('DELETE', `/api/v1/namespaces/default/pods/${on[0]!.metadata.name}`);
        await sleep(500);
        await until('three available again', 300_000, settled, state);
      }
    }
    const seconds = (Date.now() - t0) / 1000;
    // Measured until the device has caught up: every member enabled reaches a live Pod, three of them.
    if (readPool)
      await until('the device to catch up', 120_000, async () => {
        const members = await readPool!();
        const enabled = members.filter((m) => m.enabled);
        return enabled.length === 3 && enabled.every((m) => runner.live(m.port));
      });
    await sleep(1000);
    stop = true;
    await Promise.all([load, sample]);
    return { vendor, gate, action, seconds, requests, failed, noLiveMs, samples, unreachable };
  } finally {
    for (const fn of cleanups.reverse()) await fn().catch(() => undefined);
  }
}

const client = new Agent({ pipelining: 0, connections: 64, keepAliveTimeout: 1 });

/** One request on a new connection: its status, 0 when it fails. */
async function probe(vip: string): Promise<number> {
  try {
    const r = await request(`http://${vip}:${SVC_PORT}/`, {
      dispatcher: client,
      headers: { connection: 'close' },
      headersTimeout: 3000,
      bodyTimeout: 3000,
    });
    await r.body.dump();
    return r.statusCode;
  } catch {
    return 0;
  }
}

/** Vendors measured by reading the device's pool (no traffic through them). */
const readBack = (v: Vendor) => v === 'f5' || v === 'avi';
const vendors = values.only.split(',') as Vendor[];
const actions = values.actions.split(',') as Action[];
const rows: Figures[] = [];
for (const vendor of vendors)
  for (const action of actions)
    for (const gate of [false, true]) {
      const f = await one(vendor, gate, action);
      rows.push(f);
      console.error(JSON.stringify(f));
    }
await client.close();
console.log(
  `\nrollouts (3 Pods, maxSurge 1, maxUnavailable 0, preStop sleep ${PRESTOP_S} s), ${RPS} req/s on HAProxy, BIG-IP at ${DECLARATION_MS} ms a declaration, Avi at ${AVI_CALL_MS} ms a call:`,
);
console.log(
  '| vendor | action | gate | took | requests | failed | no live enabled member (sampled every 200 ms) | said unreachable |',
);
console.log('| --- | --- | --- | ---: | ---: | ---: | ---: | ---: |');
for (const r of rows)
  console.log(
    `| ${r.vendor} | ${r.action} | ${r.gate ? 'yes' : 'no'} | ${r.seconds.toFixed(1)} s | ${readBack(r.vendor) ? '-' : r.requests} | ${readBack(r.vendor) ? '-' : r.failed} | ${r.noLiveMs < 0 ? '-' : `${(r.noLiveMs / 1000).toFixed(1)} s (${r.samples} samples)`} | ${r.unreachable} |`,
  );
clearTimeout(deadline);
process.exit(0);
