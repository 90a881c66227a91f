/**
 * The Gateway API through the whole controller, on the sandbox with its CRDs installed and the
 * memory adapter: status written as the spec defines it (class, Gateway with its VIP and listeners,
 * route parents, observedGeneration), backends auto-annotated and released, and every transition
 * (a Secret goes and comes back, a ReferenceGrant is added, a route moves, the route goes)
 * converging without a restart; a restart with nothing changed writes nothing.
 */
import assert from 'node:assert/strict';
import { describe, it, type TestContext } from 'node:test';
import type { KubeConfig } from '@kubernetes/client-node';
import { MemoryAdapter } from '../../adapters/memory/adapter.ts';
import { MemoryLoadBalancer } from '../../adapters/memory/device.ts';
import { parseControllerConfig } from '../../src/config/controller-config.ts';
import { NplController } from '../../src/controller/controller.ts';
import { NPL_ENABLED_ANNOTATION } from '../../src/kube/annotations.ts';
import { resolveRequest } from '../../src/model/http-match.ts';
import type { L7VirtualService } from '../../src/model/types.ts';
import { testCertificate, tlsSecret } from '../support/certs.ts';
import { Cluster, RecordingEvents } from '../support/cluster.ts';
import { GW_API, installGatewayApi } from '../support/gateway-api.ts';
import { api, eventually, useSandbox } from '../support/sandbox.ts';

type Cond = { type: string; status: string; reason: string; observedGeneration?: number };
const brief = (cs: Cond[] | undefined) => (cs ?? []).map((c) => `${c.type}=${c.status}/${c.reason}`);

async function controller(t: TestContext, kc: KubeConfig, device: MemoryLoadBalancer) {
  const ctl = new NplController({
    kubeConfig: kc,
    config: parseControllerConfig('clusterName: c1\nvip: {cidrs: [192.0.2.0/24]}\n'),
    adapter: new MemoryAdapter({ owner: 'c1', device }),
    events: new RecordingEvents(),
    coalesceMs: 10,
    sweepIntervalMs: 0,
  });
  let stopped = false;
  const stop = async () => {
    if (stopped) return;
    stopped = true;
    await ctl.stop();
  };
  t.after(stop);
  await ctl.start();
  return { ctl, stop };
}

describe('Gateway API through the controller', () => {
  it('status, serving and every transition without a restart', async (t) => {
    const { kc, url } = await useSandbox(t);
    const c = new Cluster(kc);
    await installGatewayApi(url);
    const get = async (path: string) => (await api(url, 'GET', path)).body as Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
    const post = async (path: string, body: object) => {
      const r = await api(url, 'POST', path, body);
      assert.ok(r.status === 201, `${path}: ${r.status} ${JSON.stringify(r.body).slice(0, 400)}`);
    };
    await post(`${GW_API}/gatewayclasses`, {
      metadata: { name: 'npl-lb' },
      spec: { controllerName: 'npl-lb.io/gateway-controller' },
    });
    await post('/api/v1/namespaces', { metadata: { name: 'apps' } });
    await c.node('n1', { internal: ['192.0.2.201'] });
    await c.service('web', { enabled: null, ports: [{ name: 'http', port: 8080, targetPort: 'http' }] });
    await c.service('api', {
      enabled: null,
      namespace: 'apps',
      selector: { app: 'web' },
      ports: [{ name: 'http', port: 9090, targetPort: 'http' }],
    });
    await c.nplPod('web-1', { node: 'n1', entries: [{ nodeIP: '192.0.2.201', nodePort: 61000 }] });
    const cert = await testCertificate({ dns: ['*.example.com'] });
    await c.core.createNamespacedSecret({
      namespace: 'default',
      body: tlsSecret('default', 'gw-tls', cert) as never,
    });
    await post(`${GW_API}/namespaces/default/gateways`, {
      metadata: { name: 'gw' },
      spec: {
        gatewayClassName: 'npl-lb',
        listeners: [
          { name: 'http', port: 80, protocol: 'HTTP' },
          {
            name: 'https',
            port: 443,
            protocol: 'HTTPS',
            hostname: '*.example.com',
            tls: { certificateRefs: [{ name: 'gw-tls' }] },
          },
        ],
      },
    });
    await post(`${GW_API}/namespaces/default/httproutes`, {
      metadata: { name: 'shop' },
      spec: {
        parentRefs: [{ name: 'gw' }],
        hostnames: ['shop.example.com'],
        rules: [
          {
            matches: [{ path: { type: 'PathPrefix', value: '/api' } }],
            backendRefs: [{ name: 'api', namespace: 'apps', port: 9090 }],
          },
          { backendRefs: [{ name: 'web', port: 8080 }] },
        ],
      },
    });

    const device = new MemoryLoadBalancer();
    const first = await controller(t, kc, device);
    const gwPath = `${GW_API}/namespaces/default/gateways/gw`;
    const routePath = `${GW_API}/namespaces/default/httproutes/shop`;
    const route = async () => (await get(routePath)).status?.parents?.[0];
    const listener = async (name: string) =>
      ((await get(gwPath)).status?.listeners ?? []).find((l: { name: string }) => l.name === name);
    const https = () =>
      device.virtualServices.get('c1--gw-default.gw-HTTPS-443')?.vs as L7VirtualService | undefined;
    const http = () =>
      device.virtualServices.get('c1--gw-default.gw-HTTP-80')?.vs as L7VirtualService | undefined;

    await eventually(
      async () =>
        brief((await get(`${GW_API}/gatewayclasses/npl-lb`)).status?.conditions).join() ===
        'Accepted=True/Accepted,SupportedVersion=True/SupportedVersion',
      5000,
      'class accepted',
    );
    await eventually(
      async () =>
        brief((await route())?.conditions).join() ===
        'Accepted=True/Accepted,ResolvedRefs=False/RefNotPermitted',
      5000,
      'route: cross-namespace backend refused',
    );
    const supported = (await get(`${GW_API}/gatewayclasses/npl-lb`)).status.conditions[1];
    assert.equal(supported.message, 'Gateway API v1.6.1', 'read from the installed CRDs');
    const gw = await get(gwPath);
    assert.match(gw.status.addresses[0].value, /^192\.0\.2\.\d+$/);
    assert.equal(gw.status.addresses[0].type, 'IPAddress');
    assert.deepEqual(brief(gw.status.conditions), ['Accepted=True/Accepted', 'Programmed=True/Programmed']);
    assert.ok(gw.status.conditions.every((x: Cond) => x.observedGeneration === gw.metadata.generation));
    assert.equal((await listener('http')).attachedRoutes, 1);
    assert.deepEqual(brief((await listener('https')).conditions), [
      'Accepted=True/Accepted',
      'Programmed=True/Programmed',
      'ResolvedRefs=True/ResolvedRefs',
      'Conflicted=False/NoConflicts',
    ]);
    assert.equal((await route()).controllerName, 'npl-lb.io/gateway-controller');
    // Served: the unresolved backend's share answers 500; the other rule goes to web's pool.
    await eventually(() => https() !== undefined && http() !== undefined, 5000, 'virtual services');
    assert.equal(
      resolveRequest(https()!, { host: 'shop.example.com', path: '/' }).pool,
      'c1--default-web-http.l7',
    );
    assert.equal(resolveRequest(https()!, { host: 'shop.example.com', path: '/api/x' }).status, 500);
    assert.deepEqual(https()!.certificates, ['c1--default.gw-tls']);
    // The web backend is annotated for NodePortLocal; api (not reachable yet) is not.
    const annotated = async (ns: string, name: string) =>
      (await c.core.readNamespacedService({ name, namespace: ns })).metadata?.annotations?.[
        NPL_ENABLED_ANNOTATION
      ];
    await eventually(async () => (await annotated('default', 'web')) === 'true', 5000, 'web annotated');
    assert.equal(await annotated('apps', 'api'), undefined);

    // A ReferenceGrant: resolved, served, annotated.
    await post('/apis/gateway.networking.k8s.io/v1beta1/namespaces/apps/referencegrants', {
      metadata: { name: 'from-default' },
      spec: {
        from: [{ group: 'gateway.networking.k8s.io', kind: 'HTTPRoute', namespace: 'default' }],
        to: [{ group: '', kind: 'Service' }],
      },
    });
    await eventually(
      async () =>
        brief((await route())?.conditions).join() === 'Accepted=True/Accepted,ResolvedRefs=True/ResolvedRefs',
      5000,
      'granted',
    );
    await eventually(async () => (await annotated('apps', 'api')) === 'true', 5000, 'api annotated');
    await eventually(
      () =>
        resolveRequest(https()!, { host: 'shop.example.com', path: '/api/x' }).pool ===
        'c1--apps-api-http.l7',
      5000,
      'api served',
    );

    // The Secret goes: the HTTPS listener is not programmed and its virtual service goes; it comes back.
    await c.core.deleteNamespacedSecret({ name: 'gw-tls', namespace: 'default' });
    await eventually(
      async () =>
        brief((await listener('https'))?.conditions)[2] === 'ResolvedRefs=False/InvalidCertificateRef',
      5000,
      'listener refs',
    );
    await eventually(() => https() === undefined && device.certificates.size === 0, 5000, 'HTTPS withdrawn');
    assert.ok(http(), 'HTTP stays');
    await c.core.createNamespacedSecret({
      namespace: 'default',
      body: tlsSecret('default', 'gw-tls', cert) as never,
    });
    await eventually(() => https() !== undefined, 5000, 'HTTPS back');

    // A restart with nothing changed writes nothing to the device.
    await first.ctl.settled();
    await first.stop();
    const writes = device.writes.length;
    const second = await controller(t, kc, device);
    await second.ctl.settled();
    await new Promise((r) => setTimeout(r, 300));
    assert.deepEqual(device.writes.slice(writes), [], 'no write after a restart');

    // The route goes: its virtual service routes go, and the annotations npl-lb added are removed.
    await api(url, 'DELETE', routePath);
    await eventually(
      async () =>
        (await annotated('apps', 'api')) === undefined && (await annotated('default', 'web')) === undefined,
      5000,
      'annotations released',
    );
    await eventually(() => (http()?.routes.length ?? 0) === 0, 5000, 'routes withdrawn');
    assert.equal((await listener('http')).attachedRoutes, 0);
  });
});
