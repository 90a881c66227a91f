/**
 * Issue 48, item 2 (an Ingress's `npl-lb.io/client-ca`) through the whole product: the sandbox, the
 * controller and a real HAProxy (runtime transport), with real handshakes. Two Ingresses of one
 * class share the HTTPS VIP: the one annotated asks client certificates for its host, the other
 * asks nothing. Then the changes users make: the same Ingress applied again (nothing moves), the
 * CA rotated in its ConfigMap (the other CA's client served, the first's refused), the ConfigMap
 * deleted (the host served to nobody, an InvalidClientCA Event on the Ingress, the other Ingress
 * untouched) and put back (served again).
 */
import assert from 'node:assert/strict';
import { createServer, get as httpGet } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { describe, it, type TestContext } from 'node:test';
import {
  clientSignedBy,
  testAuthority,
  type TestCertificate,
  testCertificate,
  tlsSecret,
} from '../support/certs.ts';
import { Cluster, RecordingEvents, runController } from '../support/cluster.ts';
import { assertNoListeners, haproxyMissing } from '../support/haproxy.ts';
import { TRANSPORTS } from '../support/haproxy-transports.ts';
import { api, eventually, useSandbox } from '../support/sandbox.ts';

const HTTP_PORT = 18296;
const HTTPS_PORT = 18297;
const POD_IP = '127.0.62.41';
const SECURE = 'secure.example.com';
const OPEN = 'open.example.com';

async function app(t: TestContext): Promise<string[]> {
  const served: string[] = [];
  const server = createServer((req, res) => {
    served.push(req.url ?? '');
    res.writeHead(200).end('hello');
  });
  await new Promise<void>((r) => server.listen(8080, POD_IP, () => r()));
  t.after(() => {
    server.closeAllConnections();
    return new Promise<void>((r) => server.close(() => r()));
  });
  return served;
}

/** The status of one HTTPS request (the TLS server name, the Host, a client certificate), or 0. */
function https(
  vip: string,
  sni: string,
  host: string,
  path: string,
  client?: TestCertificate,
): Promise<number> {
  return new Promise((resolve) => {
    const req = httpsRequest(
      {
        host: vip,
        port: HTTPS_PORT,
        path,
        headers: { host },
        agent: false,
        rejectUnauthorized: false,
        servername: sni,
        timeout: 3000,
        ...(client ? { cert: client.cert, key: client.key } : {}),
      },
      (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      },
    );
    req.on('timeout', () => req.destroy());
    req.on('error', () => resolve(0));
    req.end();
  });
}

/** The status of one plain HTTP request for `host`, or 0. */
function http(vip: string, host: string): Promise<number> {
  return new Promise((resolve) => {
    const req = httpGet(
      { host: vip, port: HTTP_PORT, path: '/', headers: { host }, agent: false, timeout: 3000 },
      (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      },
    );
    req.on('timeout', () => req.destroy());
    req.on('error', () => resolve(0));
  });
}

const runtime = TRANSPORTS.filter((x) => x.name === 'runtime transport');

for (const tr of runtime)
  describe(
    `npl-lb.io/client-ca through the controller on HAProxy (${tr.name})`,
    { skip: haproxyMissing() },
    () => {
      it('asked for one host of the class; re-applied, CA rotated, ConfigMap deleted and put back', async (t) => {
        assertNoListeners('127.0.62.', [HTTP_PORT, HTTPS_PORT]);
        const served = await app(t);
        const [one, two, secureCert, openCert] = await Promise.all([
          testAuthority('clients one'),
          testAuthority('clients two'),
          testCertificate({ dns: [SECURE] }),
          testCertificate({ dns: [OPEN] }),
        ]);
        const [alice, mallory] = await Promise.all([
          clientSignedBy(one, 'alice'),
          clientSignedBy(two, 'mallory'),
        ]);
        const { kc, url } = await useSandbox(t);
        const c = new Cluster(kc);
        const rig = await tr.start(t, 4);
        const recorded = new RecordingEvents();
        await runController(
          t,
          kc,
          rig.adapter,
          `clusterName: e2e\nserviceType: ClusterIP\nvip: {cidrs: [127.0.62.64/28]}\ningressHttpPort: ${HTTP_PORT}\ningressHttpsPort: ${HTTPS_PORT}\n`,
          recorded,
        );
        await c.node('n1', { internal: ['127.0.62.250'] });
        await c.service('web', {
          enabled: null,
          selector: { app: 'web' },
          ports: [{ name: 'http', port: 8080, targetPort: 8080 }],
        });
        await c.pod('web-1', {
          node: 'n1',
          labels: { app: 'web' },
          ips: [POD_IP],
          ports: [{ containerPort: 8080 }],
        });
        await c.patchPodStatus('web-1', { status: { conditions: [{ type: 'Ready', status: 'True' }] } });
        await c.ingressClass();
        const post = async (path: string, body: unknown, method = 'POST') => {
          const r = await api(url, method, path, body);
          assert.ok(r.status < 300, `${method} ${path}: ${r.status} ${JSON.stringify(r.body).slice(0, 200)}`);
        };
        await post('/api/v1/namespaces/default/secrets', tlsSecret('default', 'secure-tls', secureCert));
        await post('/api/v1/namespaces/default/secrets', tlsSecret('default', 'open-tls', openCert));
        const configMap = (ca: string) => ({
          metadata: { name: 'clients', namespace: 'default' },
          data: { 'ca.crt': ca },
        });
        await post('/api/v1/namespaces/default/configmaps', configMap(one.cert));
        const ingress = (name: string, host: string, annotations: Record<string, string>) => ({
          metadata: { name, namespace: 'default', annotations },
          spec: {
            ingressClassName: 'npl',
            tls: [{ hosts: [host], secretName: `${name}-tls` }],
            rules: [
              {
                host,
                http: {
                  paths: [
                    {
                      path: '/',
                      pathType: 'Prefix',
                      backend: { service: { name: 'web', port: { name: 'http' } } },
                    },
                  ],
                },
              },
            ],
          },
        });
        const secure = ingress('secure', SECURE, { 'npl-lb.io/client-ca': 'clients' });
        await post('/apis/networking.k8s.io/v1/namespaces/default/ingresses', secure);
        await post('/apis/networking.k8s.io/v1/namespaces/default/ingresses', ingress('open', OPEN, {}));
        let vip = '';
        await eventually(
          async () => {
            const b = (await api(url, 'GET', '/apis/networking.k8s.io/v1/namespaces/default/ingresses/open'))
              .body as { status?: { loadBalancer?: { ingress?: { ip: string }[] } } };
            vip = b.status?.loadBalancer?.ingress?.[0]?.ip ?? '';
            return vip !== '';
          },
          15_000,
          'the class address',
        );
        const look = async () =>
          [
            await https(vip, SECURE, SECURE, '/alice', alice),
            await https(vip, SECURE, SECURE, '/mallory', mallory),
            await https(vip, SECURE, SECURE, '/none'),
            await https(vip, OPEN, SECURE, '/smuggled'),
            await https(vip, OPEN, OPEN, '/open'),
            await http(vip, SECURE),
          ].join(' ');
        await eventually(
          async () => (await look()) === '200 0 0 421 200 301',
          20_000,
          'asked for the secure host',
        );
        assert.ok(!served.some((p) => ['/mallory', '/none', '/smuggled'].includes(p)), served.join(' '));

        // The same Ingress applied again: nothing moves.
        const reloads = rig.reloads();
        await post('/apis/networking.k8s.io/v1/namespaces/default/ingresses/secure', secure, 'PUT');
        await new Promise((r) => setTimeout(r, 1500));
        assert.equal(await look(), '200 0 0 421 200 301');
        assert.equal(rig.reloads(), reloads, 'no reload for the same Ingress');

        // The CA rotated in its ConfigMap: the other CA's client served, the first's refused.
        await post('/api/v1/namespaces/default/configmaps/clients', configMap(two.cert), 'PUT');
        await eventually(async () => (await look()) === '0 200 0 421 200 301', 20_000, 'rotated');

        // The ConfigMap deleted: the secure host served to nobody, said on its Ingress; the other served.
        await post('/api/v1/namespaces/default/configmaps/clients', undefined, 'DELETE');
        await eventually(
          async () => {
            const [a, m, n, o] = [
              await https(vip, SECURE, SECURE, '/gone-alice', alice),
              await https(vip, SECURE, SECURE, '/gone-mallory', mallory),
              await https(vip, SECURE, SECURE, '/gone-none'),
              await https(vip, OPEN, OPEN, '/gone-open'),
            ];
            return a !== 200 && m !== 200 && n !== 200 && o === 200;
          },
          20_000,
          'refused, fail closed',
        );
        // Said on the Ingress (an Event, the controller's own sink).
        await eventually(
          async () =>
            recorded.seen.some(
              (e) =>
                e.target === 'default/secure' &&
                e.reason === 'InvalidClientCA' &&
                /ConfigMap "clients" not found/.test(e.message),
            ),
          10_000,
          'an InvalidClientCA Event on the Ingress',
        );

        // Put back: served again.
        await post('/api/v1/namespaces/default/configmaps', configMap(one.cert));
        await eventually(async () => (await look()) === '200 0 0 421 200 301', 20_000, 'served again');
        assert.deepEqual(rig.specProblems(), []);
      });
    },
  );
