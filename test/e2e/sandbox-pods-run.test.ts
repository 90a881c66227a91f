/**
 * Issue 47, item 5: the sandbox's kubelet runs the Pods of its catalogue's images as processes.
 * A Deployment of `npl-lb/demo-web` on a node with a loopback Pod CIDR: each Pod gets an address
 * of that CIDR and a process answering on it, Ready once its readiness probe answers. Through a
 * rollout restart, a scale down and a Pod deleted, a client that follows the Pods' readiness (as
 * a load balancer does, terminating Pods left out) loses no request, and the processes of the
 * Pods that went are gone. Faults and bad input: a process killed from outside makes its Pod
 * unready, and it is restarted (restartCount 1); a probe on a port nothing listens on keeps the
 * Pod unready, so the rollout keeps the old Pods; a node whose Pod CIDR is not loopback, and an
 * image the catalogue has not, run simulated (no address, nothing started); the sandbox stopped
 * leaves no process behind; echo-basic gets the downward API and a Secret volume (a path out of it
 * refused) and its log holds a line per request (`kubectl logs`); a Pod deleted again with a
 * shorter grace period stops within it.
 */
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect as tlsConnect } from 'node:tls';
import { describe, it } from 'node:test';
import { request } from 'undici';
import { selfSignedCertificate } from '../../src/runtime/tls.ts';
import { startSandbox } from '../../src/sandbox/server.ts';
import { api, eventually, useSandbox } from '../support/sandbox.ts';

type Obj = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
const APPS = '/apis/apps/v1/namespaces/default';
const PODS = '/api/v1/namespaces/default/pods';
const SMP = { 'Content-Type': 'application/strategic-merge-patch+json' };
const CIDR_NET = '127.83.1.';

async function readyNode(url: string, name: string, podCIDR: string): Promise<void> {
  assert.equal(
    (await api(url, 'POST', '/api/v1/nodes', { metadata: { name }, spec: { podCIDR } })).status,
    201,
  );
  const r = await api(
    url,
    'PATCH',
    `/api/v1/nodes/${name}/status`,
    {
      status: {
        addresses: [{ type: 'InternalIP', address: '127.0.0.11' }],
        conditions: [{ type: 'Ready', status: 'True' }],
      },
    },
    { 'Content-Type': 'application/merge-patch+json' },
  );
  assert.equal(r.status, 200);
}

const deployment = (
  name: string,
  replicas: number,
  probePort: number | string = 'http',
  image = 'npl-lb/demo-web:1.0',
) => ({
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name },
  spec: {
    replicas,
    strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: 1, maxUnavailable: 0 } },
    selector: { matchLabels: { app: name } },
    template: {
      metadata: { labels: { app: name } },
      spec: {
        terminationGracePeriodSeconds: 10,
        containers: [
          {
            name: 'web',
            image,
            ports: [{ name: 'http', containerPort: 8080 }],
            readinessProbe: { httpGet: { path: '/', port: probePort }, periodSeconds: 1 },
            lifecycle: { preStop: { sleep: { seconds: 1 } } },
          },
        ],
      },
    },
  },
});

const cond = (p: Obj, type: string) =>
  (p.status?.conditions as Obj[] | undefined)?.find((c) => c.type === type);
const ready = (p: Obj) => cond(p, 'Ready')?.status === 'True';

async function get(ip: string): Promise<string> {
  const r = await request(`http://${ip}:8080/`, { headersTimeout: 2000, bodyTimeout: 2000 });
  return r.body.text();
}

const answers = async (ip: string) => {
  try {
    await get(ip);
    return true;
  } catch {
    return false;
  }
};

/** The PIDs of the processes running a script for a Pod (its environment names it). */
function pidsOf(pod: string): number[] {
  const out: number[] = [];
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const cmd = readFileSync(`/proc/${d}/cmdline`, 'utf8');
      if (!/images\/(demo-web|echo-basic)\.mjs/.test(cmd)) continue;
      const env = readFileSync(`/proc/${d}/environ`, 'utf8').split('\0');
      if (env.includes(`POD_NAME=${pod}`)) out.push(Number(d));
    } catch {
      // Gone meanwhile, or not ours to read.
    }
  }
  return out;
}
const procMissing = (() => {
  try {
    readdirSync('/proc/self');
    return false;
  } catch {
    return true;
  }
})();

describe(
  'the sandbox runs Pods of its catalogue',
  { skip: procMissing && 'no /proc here to find the processes by' },
  () => {
    it('on their loopback addresses, Ready when probed; rollout restart, scale and delete lose no request', async (t) => {
      const { url } = await useSandbox(t, { workloads: true });
      await readyNode(url, 'n1', `${CIDR_NET}0/28`);
      const pods = async (app = 'web'): Promise<Obj[]> =>
        ((await api(url, 'GET', `${PODS}?labelSelector=app%3D${app}`)).body.items as Obj[]) ?? [];
      assert.equal((await api(url, 'POST', `${APPS}/deployments`, deployment('web', 2))).status, 201);
      await eventually(async () => (await pods()).filter(ready).length === 2, 10_000, 'two Pods Ready');
      const first = await pods();
      for (const p of first) {
        assert.ok(
          String(p.status.podIP).startsWith(CIDR_NET),
          `an address of the node's Pod CIDR: ${p.status.podIP}`,
        );
        assert.deepEqual(p.status.podIPs, [{ ip: p.status.podIP }]);
        assert.match(await get(p.status.podIP), new RegExp(`^hello from pod ${p.metadata.name} on n1 `));
        assert.equal(pidsOf(p.metadata.name).length, 1, 'one process per container');
      }
      assert.notEqual(first[0]!.status.podIP, first[1]!.status.podIP);

      // A client that follows readiness, as a load balancer does: Ready Pods, terminating ones out.
      let sent = 0;
      const failed: string[] = [];
      let stop = false;
      const traffic = (async () => {
        for (let i = 0; i < 2000 && !stop; i++) {
          const live = (await pods()).filter((p) => ready(p) && !p.metadata.deletionTimestamp);
          const p = live[i % Math.max(1, live.length)];
          if (p) {
            sent++;
            await get(p.status.podIP).catch((e: Error) => failed.push(`${p.metadata.name}: ${e.message}`));
          }
          await new Promise((r) => setTimeout(r, 25));
        }
      })();
      t.after(async () => {
        stop = true;
        await traffic;
      });

      // kubectl rollout restart: a new template; every Pod replaced, the old processes gone.
      const restarted = await api(
        url,
        'PATCH',
        `${APPS}/deployments/web`,
        {
          spec: {
            template: {
              metadata: { annotations: { 'kubectl.kubernetes.io/restartedAt': '2026-11-28T22:00:00Z' } },
            },
          },
        },
        SMP,
      );
      assert.equal(restarted.status, 200);
      const oldNames = new Set(first.map((p) => p.metadata.name as string));
      await eventually(
        async () => {
          const now = await pods();
          return now.length === 2 && now.every((p) => ready(p) && !oldNames.has(p.metadata.name));
        },
        20_000,
        'the rollout done',
      );
      await eventually(
        () => [...oldNames].every((n) => pidsOf(n).length === 0),
        5000,
        "the old Pods' processes gone",
      );

      // kubectl scale --replicas=1: one Pod goes after its preStop, its process with it.
      const scaled = await api(
        url,
        'PATCH',
        `${APPS}/deployments/web/scale`,
        { spec: { replicas: 1 } },
        {
          'Content-Type': 'application/merge-patch+json',
        },
      );
      assert.equal(scaled.status, 200);
      await eventually(async () => (await pods()).length === 1, 10_000, 'one Pod left');

      // kubectl delete pod: the ReplicaSet replaces it; the new one runs and answers.
      const [only] = await pods();
      // 202: accepted, the Pod terminating for its grace period (as kube-apiserver answers).
      assert.equal((await api(url, 'DELETE', `${PODS}/${only!.metadata.name}`)).status, 202);
      await eventually(
        async () => (await pods()).some((p) => ready(p) && p.metadata.name !== only!.metadata.name),
        10_000,
        'a replacement Ready',
      );
      await eventually(
        () => pidsOf(only!.metadata.name).length === 0,
        5000,
        "the deleted Pod's process gone",
      );
      stop = true;
      await traffic;
      assert.ok(sent > 20, `traffic flowed throughout (${sent} requests)`);
      assert.deepEqual(failed, [], 'no request lost');
    });

    it('faults and bad input: a killed process restarts; a probe on no port holds the rollout; others simulated', async (t) => {
      const { url } = await useSandbox(t, { workloads: true });
      await readyNode(url, 'n1', `${CIDR_NET}0/28`);
      const pods = async (app: string): Promise<Obj[]> =>
        ((await api(url, 'GET', `${PODS}?labelSelector=app%3D${app}`)).body.items as Obj[]) ?? [];

      // A process killed from outside: its Pod unready, the container started again (restartCount 1).
      assert.equal((await api(url, 'POST', `${APPS}/deployments`, deployment('crash', 1))).status, 201);
      await eventually(async () => (await pods('crash')).some(ready), 10_000, 'crash Ready');
      const [victim] = await pods('crash');
      const [pid] = pidsOf(victim!.metadata.name);
      assert.ok(pid, 'its process found');
      process.kill(pid, 'SIGKILL');
      await eventually(async () => !ready((await pods('crash'))[0]!), 5000, 'unready once its process died');
      await eventually(
        async () => {
          const [p] = await pods('crash');
          return ready(p!) && p!.status.containerStatuses[0].restartCount === 1;
        },
        10_000,
        'restarted and Ready again',
      );
      assert.ok(await answers(victim!.status.podIP), 'the restarted process answers on the same address');

      // A readiness probe on a port nothing listens on: never Ready; the rollout keeps the old Pod.
      const bad = await api(
        url,
        'PATCH',
        `${APPS}/deployments/crash`,
        {
          spec: {
            template: {
              spec: {
                containers: [
                  { name: 'web', readinessProbe: { httpGet: { path: '/', port: 9999 }, periodSeconds: 1 } },
                ],
              },
            },
          },
        },
        SMP,
      );
      assert.equal(bad.status, 200);
      await eventually(async () => (await pods('crash')).length === 2, 5000, 'a surge Pod');
      await new Promise((r) => setTimeout(r, 2500));
      const both = await pods('crash');
      const fresh = both.find((p) => p.metadata.name !== victim!.metadata.name)!;
      assert.equal(cond(fresh, 'Ready')?.status, 'False');
      assert.equal(cond(fresh, 'ContainersReady')?.reason, 'ContainersNotReady');
      assert.ok(await answers(fresh.status.podIP), 'its process runs; only the probe fails');
      const old = both.find((p) => p.metadata.name === victim!.metadata.name)!;
      assert.ok(ready(old) && !old.metadata.deletionTimestamp, 'the old Pod stays, Ready');

      // A Pod deleted with a long preStop, then again with a grace of 1 s: stopped within it.
      const slow = deployment('slow', 1);
      Object.assign(slow.spec.template.spec, { terminationGracePeriodSeconds: 120 });
      slow.spec.template.spec.containers[0]!.lifecycle = { preStop: { sleep: { seconds: 60 } } };
      assert.equal((await api(url, 'POST', `${APPS}/deployments`, slow)).status, 201);
      await eventually(async () => (await pods('slow')).some(ready), 10_000, 'slow Ready');
      const [long] = await pods('slow');
      assert.equal((await api(url, 'DELETE', `${PODS}/${long!.metadata.name}`)).status, 202);
      await new Promise((r) => setTimeout(r, 300));
      assert.equal(pidsOf(long!.metadata.name).length, 1, 'still running its 60 s preStop');
      const t0 = Date.now();
      assert.equal(
        (await api(url, 'DELETE', `${PODS}/${long!.metadata.name}?gracePeriodSeconds=1`)).status,
        202,
      );
      await eventually(
        async () => !(await pods('slow')).some((p) => p.metadata.name === long!.metadata.name),
        5000,
        'gone within the shorter grace period',
      );
      assert.ok(Date.now() - t0 < 4000, `stopped in ${Date.now() - t0} ms`);
      assert.deepEqual(pidsOf(long!.metadata.name), []);

      // A node whose Pod CIDR is not loopback, and an image the catalogue has not: simulated.
      await readyNode(url, 'n2', '10.244.0.0/24');
      const onN2 = deployment('far', 1);
      (onN2.spec.template.spec as Obj).nodeSelector = { 'kubernetes.io/hostname': 'n2' };
      await api(
        url,
        'PATCH',
        '/api/v1/nodes/n2',
        { metadata: { labels: { 'kubernetes.io/hostname': 'n2' } } },
        {
          'Content-Type': 'application/merge-patch+json',
        },
      );
      assert.equal((await api(url, 'POST', `${APPS}/deployments`, onN2)).status, 201);
      assert.equal(
        (await api(url, 'POST', `${APPS}/deployments`, deployment('other', 1, 'http', 'example.com/app:1')))
          .status,
        201,
      );
      for (const app of ['far', 'other']) {
        await eventually(async () => (await pods(app)).some(ready), 5000, `${app} Ready`);
        const [p] = await pods(app);
        assert.equal(p!.status.podIP, undefined, `${app}: no address, nothing started`);
        assert.deepEqual(pidsOf(p!.metadata.name), []);
      }
    });

    it('echo-basic: the downward API in its environment, a Secret volume as files, HTTPS from them; a hostile item path written nowhere', async (t) => {
      const { url } = await useSandbox(t, { workloads: true });
      await readyNode(url, 'n1', '127.83.3.0/29');
      const tls = await selfSignedCertificate('echo.example');
      const secret = {
        metadata: { name: 'echo-cert' },
        type: 'kubernetes.io/tls',
        data: {
          'tls.crt': Buffer.from(tls.cert).toString('base64'),
          'tls.key': Buffer.from(tls.key).toString('base64'),
        },
      };
      assert.equal((await api(url, 'POST', '/api/v1/namespaces/default/secrets', secret)).status, 201);
      const env = [
        { name: 'POD_NAME', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } },
        { name: 'NAMESPACE', valueFrom: { fieldRef: { fieldPath: 'metadata.namespace' } } },
        { name: 'TLS_SERVER_CERT', value: '/etc/secret-volume/crt' },
        { name: 'TLS_SERVER_PRIVKEY', value: '/etc/secret-volume/key' },
      ];
      const echo = {
        metadata: { name: 'echo' },
        spec: {
          replicas: 1,
          selector: { matchLabels: { app: 'echo' } },
          template: {
            metadata: { labels: { app: 'echo' } },
            spec: {
              containers: [
                {
                  name: 'echo',
                  image: 'registry.k8s.io/gateway-api/echo-basic:v1.5.1',
                  env,
                  volumeMounts: [{ name: 'secret-volume', mountPath: '/etc/secret-volume' }],
                },
              ],
              volumes: [
                {
                  name: 'secret-volume',
                  secret: {
                    secretName: 'echo-cert',
                    items: [
                      { key: 'tls.crt', path: 'crt' },
                      { key: 'tls.key', path: 'key' },
                      { key: 'tls.key', path: '../../npl-lb-escape' },
                    ],
                  },
                },
              ],
            },
          },
        },
      };
      assert.equal((await api(url, 'POST', `${APPS}/deployments`, echo)).status, 201);
      const pods = async (): Promise<Obj[]> =>
        ((await api(url, 'GET', `${PODS}?labelSelector=app%3Decho`)).body.items as Obj[]) ?? [];
      await eventually(async () => (await pods()).some(ready), 10_000, 'echo Ready');
      const [p] = await pods();
      const ip = String(p!.status.podIP);
      const plain = JSON.parse(
        await (await request(`http://${ip}:3000/hello`, { headers: { 'x-test': 'a' } })).body.text(),
      ) as Obj;
      assert.equal(plain.pod, p!.metadata.name, 'POD_NAME from the downward API');
      assert.equal(plain.namespace, 'default');
      assert.equal(plain.path, '/hello');
      assert.deepEqual(plain.headers['X-Test'], ['a']);
      // HTTPS with the Secret's certificate, read from the volume's files.
      const served = await new Promise<string>((resolve, reject) => {
        const s = tlsConnect({ host: ip, port: 8443, servername: 'echo.example', ca: tls.cert }, () => {
          resolve(String(s.getPeerCertificate().subjectaltname ?? ''));
          s.destroy();
        });
        s.on('error', reject);
      });
      assert.match(served, /DNS:echo\.example/, 'the Secret’s certificate, verified against its CA');
      assert.ok(!existsSync(join(tmpdir(), 'npl-lb-escape')), 'a path out of the volume is written nowhere');

      // Its log (`kubectl logs`): echo-basic's line per request, as the kubelet keeps it, with
      // sinceTime, tailLines and timestamps; a bad tailLines is the API server's 400.
      const log = async (q = '') => {
        const r = await request(`${url}${PODS}/${p!.metadata.name}/log${q}`);
        return { status: r.statusCode, text: await r.body.text() };
      };
      const mark = new Date().toISOString();
      await (await request(`http://${ip}:3000/after?id=7`)).body.text();
      await eventually(async () => (await log()).text.includes('/after?id=7'), 5000, 'the line logged');
      const all = (await log()).text;
      assert.match(all, /^Echoing back request made to \/hello to client \(127\.[0-9.]+:\d+\)$/m);
      assert.match(all, /^Echoing back request made to \/after\?id=7 to client/m);
      const since = (await log(`?sinceTime=${encodeURIComponent(mark)}`)).text;
      assert.ok(!since.includes('/hello') && since.includes('/after?id=7'), since);
      assert.equal((await log('?tailLines=1')).text.trim().split('\n').length, 1);
      assert.match(
        (await log('?tailLines=1&timestamps=true')).text,
        /^\d{4}-\d\d-\d\dT[0-9:.]+Z Echoing back/,
      );
      assert.equal((await log('?tailLines=-1')).status, 400);
      assert.equal((await log('?sinceTime=yesterday')).status, 400);
    });

    it('a sandbox stopped leaves no process behind', async () => {
      const sandbox = await startSandbox({ workloads: true });
      try {
        await readyNode(sandbox.url, 'n1', '127.83.2.0/30');
        assert.equal(
          (await api(sandbox.url, 'POST', `${APPS}/deployments`, deployment('web', 3))).status,
          201,
        );
        const pods = async (): Promise<Obj[]> =>
          ((await api(sandbox.url, 'GET', PODS)).body.items as Obj[]) ?? [];
        // A /30 holds two host addresses: the third Pod has none and runs simulated.
        await eventually(async () => (await pods()).filter(ready).length === 3, 10_000, 'three Pods Ready');
        const withIp = (await pods()).filter((p) => p.status.podIP);
        assert.equal(withIp.length, 2, 'two addresses in a /30');
        assert.ok(withIp.every((p) => pidsOf(p.metadata.name).length === 1));
        const names = withIp.map((p) => p.metadata.name as string);
        await sandbox.close();
        await eventually(() => names.every((n) => pidsOf(n).length === 0), 5000, 'every process gone');
      } finally {
        await sandbox.close().catch(() => {});
      }
    });
  },
);
