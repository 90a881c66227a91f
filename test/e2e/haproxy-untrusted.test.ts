/**
 * Untrusted input against a real HAProxy, on both transports: an Ingress path that carries a
 * directive never reaches the configuration and is never served (through the controller, and
 * straight into the adapter with the model's check bypassed); and the L4 VIP of a Service that
 * also backs an Ingress passes raw TCP, because the two never share a backend.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createServer, type Socket } from 'node:net';
import { connect } from 'node:net';
import { describe, it, type TestContext } from 'node:test';
import { NetworkingV1Api } from '@kubernetes/client-node';
import { request } from 'undici';
import type { LoadBalancerAdapter } from '../../src/adapter/contract.ts';
import { parseControllerConfig } from '../../src/config/controller-config.ts';
import { NplController } from '../../src/controller/controller.ts';
import type { L7VirtualService, Pool } from '../../src/model/types.ts';
import { Cluster, RecordingEvents } from '../support/cluster.ts';
import { startDataplaneSim } from '../support/dataplane.ts';
import { configPath } from '../../adapters/haproxy/process.ts';
import { assertNoListeners, haproxyMissing, startHaproxy } from '../support/haproxy.ts';
import { eventually, useSandbox } from '../support/sandbox.ts';

const NODE_IP = '127.0.15.1';
const INJECTED = '/a\n    http-request return status 200 content-type text/plain string pwned';
type Transport = 'runtime' | 'dataplane';

/** A backend that answers HTTP requests and echoes anything else, byte for byte. */
async function backend(t: TestContext): Promise<number> {
  const sockets = new Set<Socket>();
  const server = createServer((s) => {
    sockets.add(s);
    s.on('error', () => s.destroy());
    s.on('close', () => sockets.delete(s));
    s.once('data', (first) => {
      if (first.toString('latin1').startsWith('GET ')) {
        s.end('HTTP/1.1 200 OK\r\ncontent-length: 10\r\nconnection: close\r\n\r\npod web-1\n');
      } else {
        s.write(first);
        s.pipe(s);
      }
    });
  });
  await new Promise<void>((r) => server.listen(0, NODE_IP, () => r()));
  t.after(
    () =>
      new Promise<void>((r) => {
        for (const s of sockets) s.destroy();
        server.close(() => r());
      }),
  );
  return (server.address() as { port: number }).port;
}

async function adapterFor(t: TestContext, transport: Transport, owner: string) {
  if (transport === 'runtime') {
    const rig = await startHaproxy(t);
    const adapter = rig.adapter(owner, { healthChecks: false });
    return { adapter, file: configPath(rig.paths), close: () => adapter.close() };
  }
  const rig = await startDataplaneSim(t);
  const adapter = rig.adapter(owner, 'v3', { healthChecks: false, transparentBinds: false });
  // The rig closes its adapters.
  return { adapter: adapter as LoadBalancerAdapter, file: rig.sim.configFile, close: async () => {} };
}

/** Sends raw bytes to host:port and returns what comes back within a short time. */
function rawExchange(host: string, port: number, data: Buffer): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    const s = connect(port, host, () => s.write(data));
    const done = () => {
      s.destroy();
      resolve(Buffer.concat(chunks));
    };
    s.on('data', (d) => {
      chunks.push(d);
      if (Buffer.concat(chunks).length >= data.length) done();
    });
    s.on('error', reject);
    s.on('close', done);
    setTimeout(done, 2000).unref();
  });
}

const get = async (url: string, host: string) => {
  const r = await request(url, { headers: { host }, reset: true, headersTimeout: 3000, bodyTimeout: 3000 });
  return { status: r.statusCode, body: await r.body.text() };
};

const controllerScenario = (transport: Transport) => async (t: TestContext) => {
  assertNoListeners('127.0.32.', [18095, 18096]);
  const port = await backend(t);
  const { kc } = await useSandbox(t);
  const c = new Cluster(kc);
  const net = kc.makeApiClient(NetworkingV1Api);
  await net.createIngressClass({
    body: { metadata: { name: 'npl' }, spec: { controller: 'npl-lb.io/ingress-controller' } },
  });
  await c.node('n1', { internal: [NODE_IP] });
  await c.service('web', {
    type: 'LoadBalancer',
    enabled: null,
    ports: [{ name: 'http', port: 18095, targetPort: 'http' }],
  });
  await c.nplPod('web-1', { node: 'n1', entries: [{ nodeIP: NODE_IP, nodePort: port }] });
  const ingress = (name: string, path: string, pathType: string) => ({
    metadata: { name },
    spec: {
      ingressClassName: 'npl',
      rules: [
        {
          host: 'web.example',
          http: {
            paths: [{ path, pathType, backend: { service: { name: 'web', port: { name: 'http' } } } }],
          },
        },
      ],
    },
  });
  await net.createNamespacedIngress({ namespace: 'default', body: ingress('web', '/', 'Prefix') });
  await net.createNamespacedIngress({
    namespace: 'default',
    body: ingress('evil', INJECTED, 'ImplementationSpecific'),
  });
  const { adapter, file, close } = await adapterFor(t, transport, 'e2e');
  const events = new RecordingEvents();
  const ctl = new NplController({
    kubeConfig: kc,
    config: parseControllerConfig(
      'clusterName: e2e\ndefaultLoadBalancer: true\nvip: {cidrs: [127.0.32.0/24]}\ningressHttpPort: 18096\n',
    ),
    adapter,
    events,
    coalesceMs: 10,
    sweepIntervalMs: 0,
  });
  t.after(async () => {
    await ctl.stop();
    await close();
  });
  await ctl.start();
  const vipOf = async (path: 'services' | 'ingresses') => {
    const o =
      path === 'services'
        ? await c.core.readNamespacedService({ name: 'web', namespace: 'default' })
        : await net.readNamespacedIngress({ name: 'web', namespace: 'default' });
    return o.status?.loadBalancer?.ingress?.[0]?.ip;
  };
  let l4: string | undefined;
  let l7: string | undefined;
  await eventually(
    async () => (l4 = await vipOf('services')) !== undefined && (l7 = await vipOf('ingresses')) !== undefined,
    15_000,
    'both VIPs published',
  );
  await eventually(
    () => events.seen.some((e) => e.target === 'default/evil' && e.reason === 'InvalidIngressRule'),
    5000,
    'the author is told',
  );
  // Raw TCP (a TLS ClientHello's first bytes, then binary) through the L4 VIP comes back unchanged.
  const raw = Buffer.from([0x16, 0x03, 0x01, 0x00, 0x05, 0x68, 0x65, 0x6c, 0x6c, 0x6f, 0x00, 0xff, 0x0a]);
  await eventually(
    async () => (await rawExchange(l4!, 18095, raw).catch(() => Buffer.alloc(0))).equals(raw),
    10_000,
    'raw TCP through the L4 VIP',
  );
  // HTTP through the Ingress is served; the injected directive is neither configured nor served.
  await eventually(
    async () =>
      (await get(`http://${l7!}:18096/`, 'web.example').catch(() => ({ body: '' }))).body === 'pod web-1\n',
    10_000,
    'HTTP through the Ingress VIP',
  );
  const text = readFileSync(file, 'utf8');
  assert.ok(!text.includes('pwned'), 'the directive is not in the configuration');
  for (const host of ['web.example', 'other.example']) {
    const r = await get(`http://${l7!}:18096/a`, host);
    assert.notEqual(r.body, 'pwned', `not served for ${host}`);
  }
};

/** Straight into the adapter, the model's check bypassed: the renderer's own encoding holds. */
const bypassScenario = (transport: Transport) => async (t: TestContext) => {
  assertNoListeners('127.0.32.', [18097]);
  const port = await backend(t);
  const { adapter, file, close } = await adapterFor(t, transport, 'raw');
  t.after(close);
  const pool: Pool = {
    name: 'raw--web.l7',
    protocol: 'TCP',
    health: 'http',
    service: 'default/web',
    servicePort: 'http',
    members: [{ address: NODE_IP, port, node: 'n1', pod: 'default/web-1', enabled: true }],
  };
  const vs: L7VirtualService = {
    kind: 'l7',
    name: 'raw--ingress-npl',
    vip: '127.0.32.250',
    port: 18097,
    ingressClass: 'npl',
    defaultPool: undefined,
    routes: [
      {
        host: '',
        path: INJECTED,
        pathType: 'ImplementationSpecific',
        pool: pool.name,
        source: 'default/evil',
      },
      {
        host: 'x.example"\n    http-request return status 200 content-type text/plain string pwned\n#',
        path: '/',
        pathType: 'Prefix',
        pool: pool.name,
        source: 'default/evil',
      },
      { host: 'web.example', path: '/', pathType: 'Prefix', pool: pool.name, source: 'default/web' },
    ],
  };
  const results = await adapter.apply([
    { op: 'create', kind: 'pool', name: pool.name, desired: pool },
    { op: 'create', kind: 'virtualService', name: vs.name, desired: vs },
  ]);
  assert.deepEqual(
    results.map((r) => r.error?.message),
    [undefined, undefined],
  );
  const text = readFileSync(file, 'utf8');
  // No directive line but the backend's own route timeout rule (the Data Plane transport writes it
  // in every HTTP backend): the injected text stays inside its quoted argument.
  assert.ok(
    !/^\s*http-request (?!set-timeout server var\(txn\.npl_timeout\) if \{ var\(txn\.npl_timeout\) -m found \}$)/m.test(
      text,
    ),
    'no directive line in the configuration',
  );
  await eventually(
    async () =>
      (await get('http://127.0.32.250:18097/', 'web.example').catch(() => ({ body: '' }))).body ===
      'pod web-1\n',
    10_000,
    'the honest route is served',
  );
  for (const host of ['web.example', 'x.example', 'other.example']) {
    const r = await get('http://127.0.32.250:18097/a', host);
    assert.notEqual(r.body, 'pwned', `not served for ${host}`);
  }
  const back = (await adapter.observe()).owned.virtualServices.find((v) => v.name === vs.name);
  assert.ok(back?.kind === 'l7');
  assert.deepEqual(
    back.routes.map((r) => r.path).sort(),
    vs.routes.map((r) => r.path).sort(),
    'the values read back as they were written',
  );
};

describe('untrusted input on a real HAProxy', { skip: haproxyMissing() }, () => {
  for (const transport of ['runtime', 'dataplane'] as const) {
    it(
      `through the controller: injected path refused, L4 VIP passes raw TCP (${transport})`,
      controllerScenario(transport),
    );
    it(`straight into the adapter: the encoding holds on its own (${transport})`, bypassScenario(transport));
  }
});
