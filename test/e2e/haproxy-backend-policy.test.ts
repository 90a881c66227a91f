/**
 * Issue 33, item 2 (a slice): a BackendPolicy on a real HAProxy, every transport (runtime; Data
 * Plane API v2 and v3 on the simulator), with real traffic through an Ingress. Without a policy the
 * two Pods share the requests (round robin); a policy with least connections and Cookie persistence
 * keeps a client with its cookie on one Pod across 50 requests; when that Pod goes, the client is
 * served by the other one (a new cookie). The policy's status says Accepted; a second policy on the
 * same Service is Conflicted, one on a Service that does not exist TargetNotFound; a bad value is
 * refused by the API (the CRD's schema) and never reaches the device. The policy's own health
 * check then replaces the TCP check (no Pod has a probe): a failing /healthz takes the Pod out,
 * and its method (HEAD) and expected statuses decide what up is. Its member timeouts reach
 * HAProxy: a Pod slower than the server timeout is a 504, and without the timeout the client
 * waits for it. SourceIP persistence keeps one client address on one Pod. An Ingress's
 * npl-lb.io/session-persistence annotation, without any BackendPolicy, sets the cookie too.
 */
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { describe, it, type TestContext } from 'node:test';
import { request } from 'undici';
import { installNplLbCrds } from '../../src/sandbox/npl-lb-crds.ts';
import { Cluster, runController } from '../support/cluster.ts';
import { assertNoListeners, haproxyMissing } from '../support/haproxy.ts';
import { TRANSPORTS } from '../support/haproxy-transports.ts';
import { api, eventually, useSandbox } from '../support/sandbox.ts';

const ING_PORT = 18197;
const POD_IPS = ['127.0.57.11', '127.0.57.12'] as const;
const POLICIES = '/apis/npl-lb.io/v1alpha1/namespaces/default/backendpolicies';

/**
 * Answers its address, on every path; /healthz fails while `sick` holds its address, and while
 * `headOnly` does it answers a HEAD with 204 and a GET with 500.
 */
async function app(
  t: TestContext,
  ip: string,
  sick: Set<string>,
  headOnly = new Set<string>(),
): Promise<void> {
  const server = createServer((req, res) => {
    if (req.url === '/healthz' && sick.has(ip)) res.writeHead(500).end('sick');
    else if (req.url === '/healthz' && headOnly.has(ip))
      res.writeHead(req.method === 'HEAD' ? 204 : 500).end();
    else if (req.url === '/slow') setTimeout(() => res.writeHead(200).end(ip), 2500);
    else res.writeHead(200).end(ip);
  });
  await new Promise<void>((r) => server.listen(8080, ip, () => r()));
  t.after(() => {
    server.closeAllConnections();
    return new Promise<void>((r) => server.close(() => r()));
  });
}

/** One request: who answered, and the persistence cookie set (name=value), if any. */
async function hit(vip: string, cookie?: string): Promise<{ pod: string; setCookie: string }> {
  try {
    const r = await request(`http://${vip}:${ING_PORT}/`, {
      headers: { host: 'web.example.com', ...(cookie ? { cookie } : {}) },
      reset: true,
      headersTimeout: 2000,
      bodyTimeout: 2000,
    });
    const set = r.headers['set-cookie'];
    const first = (Array.isArray(set) ? set[0] : set) ?? '';
    return {
      pod: r.statusCode === 200 ? await r.body.text() : `HTTP ${r.statusCode}`,
      setCookie: first.split(';')[0]!,
    };
  } catch {
    return { pod: '', setCookie: '' };
  }
}

const conditionsOf = async (url: string, name: string): Promise<string[]> => {
  const body = (await api(url, 'GET', `${POLICIES}/${name}`)).body as {
    status?: {
      ancestors?: {
        ancestorRef: { name: string };
        conditions: { type: string; status: string; reason: string }[];
      }[];
    };
  };
  return (body.status?.ancestors ?? []).flatMap((a) =>
    a.conditions.map((c) => `${a.ancestorRef.name} ${c.type}=${c.status} ${c.reason}`),
  );
};

for (const tr of TRANSPORTS)
  describe(`BackendPolicy on HAProxy (${tr.name})`, { skip: haproxyMissing() }, () => {
    it('least connections and a cookie keep a client on one Pod across 50 requests; it moves when the Pod goes; status per target', async (t) => {
      assertNoListeners('127.0.57.', [ING_PORT]);
      const sick = new Set<string>();
      const headOnly = new Set<string>();
      for (const ip of POD_IPS) await app(t, ip, sick, headOnly);
      const { kc, url } = await useSandbox(t);
      await installNplLbCrds(url);
      const c = new Cluster(kc);
      const rig = await tr.start(t, 4, { healthChecks: true });
      const ctl = await runController(
        t,
        kc,
        rig.adapter,
        `clusterName: e2e\nserviceType: ClusterIP\nvip: {cidrs: [127.0.57.32/28]}\ningressHttpPort: ${ING_PORT}\n`,
      );
      await c.node('n1', { internal: ['127.0.57.250'] });
      await c.service('web', {
        enabled: null,
        selector: { app: 'web' },
        ports: [{ name: 'http', port: 8080, targetPort: 'http' }],
      });
      for (const [i, ip] of POD_IPS.entries()) {
        await c.pod(`web-${i}`, {
          node: 'n1',
          labels: { app: 'web' },
          ips: [ip],
          ports: [{ name: 'http', containerPort: 8080 }],
        });
        await c.patchPodStatus(`web-${i}`, { status: { conditions: [{ type: 'Ready', status: 'True' }] } });
      }
      await c.ingressClass();
      await c.ingress('web', { host: 'web.example.com', service: 'web', port: 'http' });
      let vip = '';
      await eventually(
        async () => {
          const b = (await api(url, 'GET', '/apis/networking.k8s.io/v1/namespaces/default/ingresses/web'))
            .body as {
            status?: { loadBalancer?: { ingress?: { ip: string }[] } };
          };
          vip = b.status?.loadBalancer?.ingress?.[0]?.ip ?? '';
          return vip !== '';
        },
        15_000,
        'the Ingress address',
      );
      // No policy: both Pods answer, and no cookie is set.
      const seen = new Set<string>();
      await eventually(
        async () => {
          const r = await hit(vip);
          assert.equal(r.setCookie, '');
          if (POD_IPS.includes(r.pod as never)) seen.add(r.pod);
          return seen.size === 2;
        },
        15_000,
        'round robin over both Pods',
      );

      // An Ingress author's annotation, without a BackendPolicy: a cookie on the Service's HTTP pool;
      // taken off again, none.
      const annotate = async (value: string | null) =>
        assert.equal(
          (
            await api(
              url,
              'PATCH',
              '/apis/networking.k8s.io/v1/namespaces/default/ingresses/web',
              { metadata: { annotations: { 'npl-lb.io/session-persistence': value } } },
              { 'Content-Type': 'application/merge-patch+json' },
            )
          ).status,
          200,
        );
      await annotate('Cookie');
      await eventually(
        async () => (await hit(vip)).setCookie.startsWith('npllb_'),
        10_000,
        'the annotation’s cookie',
      );
      await annotate(null);
      await eventually(async () => (await hit(vip)).setCookie === '', 10_000, 'no cookie without it');

      // A bad value is refused at the API, before the controller sees it.
      const refused = await api(url, 'POST', POLICIES, {
        apiVersion: 'npl-lb.io/v1alpha1',
        kind: 'BackendPolicy',
        metadata: { name: 'bad' },
        spec: { targetRefs: [{ group: '', kind: 'Service', name: 'web' }], algorithm: 'Fastest' },
      });
      assert.equal(refused.status, 422);

      const create = async (name: string, spec: object) =>
        assert.equal(
          (
            await api(url, 'POST', POLICIES, {
              apiVersion: 'npl-lb.io/v1alpha1',
              kind: 'BackendPolicy',
              metadata: { name },
              spec,
            })
          ).status,
          201,
        );
      await create('sticky', {
        targetRefs: [{ group: '', kind: 'Service', name: 'web' }],
        algorithm: 'LeastConnections',
        sessionPersistence: { type: 'Cookie' },
      });
      await eventually(
        async () => (await conditionsOf(url, 'sticky')).join() === 'web Accepted=True Accepted',
        10_000,
        'the policy accepted',
      );
      // The first answer sets the pool's cookie; 50 requests carrying it reach one Pod.
      let first = { pod: '', setCookie: '' };
      await eventually(
        async () => (first = await hit(vip)).setCookie.startsWith('npllb_'),
        10_000,
        'a persistence cookie',
      );
      const stuck = new Set<string>();
      for (let i = 0; i < 50; i++) stuck.add((await hit(vip, first.setCookie)).pod);
      assert.deepEqual([...stuck], [first.pod]);
      const pools = ctl.state.document().pools.filter((p) => p.service === 'default/web');
      assert.ok(
        pools.some((p) => p.algorithm === 'LeastConnections' && p.persistence === 'Cookie'),
        JSON.stringify(pools),
      );

      // SourceIP persistence (every transport: the Data Plane's stick_table and stick rule): with
      // round robin, every request of this client (127.0.0.1), cookie or not, reaches one Pod.
      const patchSticky = async (spec: object) =>
        assert.equal(
          (
            await api(
              url,
              'PATCH',
              `${POLICIES}/sticky`,
              { spec },
              { 'Content-Type': 'application/merge-patch+json' },
            )
          ).status,
          200,
        );
      await patchSticky({ algorithm: 'RoundRobin', sessionPersistence: { type: 'SourceIP' } });
      await eventually(
        async () => {
          const bySource = new Set<string>();
          for (let i = 0; i < 20; i++) bySource.add((await hit(vip)).pod);
          return bySource.size === 1 && !bySource.has('');
        },
        15_000,
        'one Pod for every request of one client address',
      );
      await patchSticky({ algorithm: 'LeastConnections', sessionPersistence: { type: 'Cookie' } });
      await eventually(
        async () => (await hit(vip)).setCookie.startsWith('npllb_'),
        10_000,
        'the cookie again',
      );

      // Another policy on the same Service is the younger (created the same second, the tie goes to
      // the name: 'sticky' < 'younger'): Conflicted; one on no Service: TargetNotFound.
      await create('younger', {
        targetRefs: [{ group: '', kind: 'Service', name: 'web' }],
        algorithm: 'SourceHash',
      });
      await create('ghost', { targetRefs: [{ group: '', kind: 'Service', name: 'nope' }] });
      let shown: string[] = [];
      await eventually(
        async () =>
          (shown = [...(await conditionsOf(url, 'younger')), ...(await conditionsOf(url, 'ghost'))]).join(
            ';',
          ) === 'web Accepted=False Conflicted;nope Accepted=False TargetNotFound',
        10_000,
        'Conflicted and TargetNotFound',
      ).catch((e: Error) => assert.fail(`${e.message}: ${shown.join('; ')}`));

      // The Pod the client is kept on goes: the same cookie now reaches the other Pod.
      const gone = POD_IPS.indexOf(first.pod as never);
      await c.core.deleteNamespacedPod({ name: `web-${gone}`, namespace: 'default' });
      const other = POD_IPS[1 - gone]!;
      await eventually(
        async () => (await hit(vip, first.setCookie)).pod === other,
        10_000,
        'moved to the other Pod',
      );
      const after = new Set<string>();
      for (let i = 0; i < 10; i++) after.add((await hit(vip, first.setCookie)).pod);
      assert.deepEqual([...after], [other]);

      // The policy's own check (no probe anywhere): /healthz, failing once; the Pod left fails it.
      const patched = await api(
        url,
        'PATCH',
        `${POLICIES}/sticky`,
        {
          spec: {
            healthCheck: { type: 'HTTP', path: '/healthz', intervalSeconds: 1, unhealthyThreshold: 1 },
          },
        },
        { 'Content-Type': 'application/merge-patch+json' },
      );
      assert.equal(patched.status, 200);
      await eventually(
        () =>
          ctl.state
            .document()
            .pools.filter((p) => p.service === 'default/web')
            .every((p) => p.check?.path === '/healthz'),
        10_000,
        'the policy’s check on every pool of the Service',
      );
      sick.add(other);
      await eventually(
        async () => (await hit(vip, first.setCookie)).pod === 'HTTP 503',
        10_000,
        'down by its check',
      );
      sick.delete(other);
      await eventually(async () => (await hit(vip)).pod === other, 10_000, 'up again');

      // The check's method and statuses (issue 33 item 1): the Pod answers a GET of /healthz 500
      // and a HEAD 204; checked by GET it is down, by HEAD up. Expecting 200 only takes it down
      // again, expecting 200-204 brings it back (the Data Plane transport: the backend's http_checks).
      const check = async (hc: object) =>
        assert.equal(
          (
            await api(
              url,
              'PATCH',
              `${POLICIES}/sticky`,
              {
                spec: {
                  healthCheck: {
                    type: 'HTTP',
                    path: '/healthz',
                    intervalSeconds: 1,
                    unhealthyThreshold: 1,
                    ...hc,
                  },
                },
              },
              { 'Content-Type': 'application/merge-patch+json' },
            )
          ).status,
          200,
        );
      headOnly.add(other);
      await eventually(async () => (await hit(vip)).pod === 'HTTP 503', 10_000, 'down: its GET fails');
      await check({ method: 'HEAD' });
      await eventually(async () => (await hit(vip)).pod === other, 10_000, 'up: its HEAD answers 204');
      await check({ method: 'HEAD', expectedStatuses: [{ from: 200 }] });
      await eventually(async () => (await hit(vip)).pod === 'HTTP 503', 10_000, 'down: 204 is not 200');
      await check({ method: 'HEAD', expectedStatuses: [{ from: 200, to: 204 }] });
      await eventually(async () => (await hit(vip)).pod === other, 10_000, 'up: 204 is in 200-204');
      headOnly.delete(other);

      // Member timeouts: with a 1 s server timeout a Pod that takes 2.5 s to answer gets the client
      // a 504 from HAProxy; without it, the client waits and gets the answer.
      const slow = async (): Promise<number> => {
        const r = await request(`http://${vip}:${ING_PORT}/slow`, {
          headers: { host: 'web.example.com' },
          reset: true,
          headersTimeout: 10_000,
          bodyTimeout: 10_000,
        });
        await r.body.text();
        return r.statusCode;
      };
      const timeouts = async (value: object | null) =>
        assert.equal(
          (
            await api(
              url,
              'PATCH',
              `${POLICIES}/sticky`,
              { spec: { timeouts: value } },
              {
                'Content-Type': 'application/merge-patch+json',
              },
            )
          ).status,
          200,
        );
      await timeouts({ connectSeconds: 2, serverSeconds: 1 });
      await eventually(async () => (await slow()) === 504, 15_000, 'a 1 s server timeout answers 504');
      assert.equal((await conditionsOf(url, 'sticky')).join(), 'web Accepted=True Accepted');
      await timeouts(null);
      await eventually(async () => (await slow()) === 200, 15_000, 'no timeout: the answer arrives');
      assert.deepEqual(rig.specProblems(), []);
    });
  });
