/**
 * The controller as a hostile namespace user and an SRE would try it, on the sandbox with the
 * memory adapter: injected Ingress paths, forged NodePortLocal annotations, VIP hijacks, a failure
 * the device already fixed, and every Ingress problem told to its author.
 */
import assert from 'node:assert/strict';
import { describe, it, type TestContext } from 'node:test';
import { type KubeConfig, NetworkingV1Api, PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import { MemoryAdapter } from '../../adapters/memory/adapter.ts';
import { MemoryLoadBalancer } from '../../adapters/memory/device.ts';
import type { ApplyError } from '../../src/adapter/contract.ts';
import { parseControllerConfig } from '../../src/config/controller-config.ts';
import { NplController } from '../../src/controller/controller.ts';
import { VIP_ANNOTATION } from '../../src/kube/annotations.ts';
import type { Change } from '../../src/plan/diff.ts';
import { Cluster, RecordingEvents } from '../support/cluster.ts';
import { eventually, useSandbox } from '../support/sandbox.ts';

interface Started {
  ctl: NplController;
  events: RecordingEvents;
  stop: () => Promise<void>;
}

async function startController(
  t: Pick<TestContext, 'after'>,
  kc: KubeConfig,
  device: MemoryLoadBalancer,
  fault?: (c: Change) => ApplyError | undefined,
): Promise<Started> {
  const events = new RecordingEvents();
  const ctl = new NplController({
    kubeConfig: kc,
    config: parseControllerConfig(
      'clusterName: c1\ndefaultLoadBalancer: true\nvip: {cidrs: [192.0.2.0/24]}\ningressHttpPort: 80\n',
    ),
    adapter: new MemoryAdapter({ owner: 'c1', device, ...(fault ? { fault } : {}) }),
    events,
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
  return { ctl, events, stop };
}

interface Entry {
  podPort: number;
  nodeIP: string;
  nodePort: number;
  protocol?: string;
  ipFamily?: string;
}

/** A Running Pod on `node` with container port 8080 named http, Ready, annotated as given. */
const pod = (c: Cluster, name: string, node: string, entries: Entry[] | string) =>
  c.nplPod(name, { node, entries });

const setReady = (c: Cluster, name: string, ready: boolean) =>
  c.patchPodStatus(name, { status: { conditions: [{ type: 'Ready', status: ready ? 'True' : 'False' }] } });

const members = (device: MemoryLoadBalancer, pool: string) =>
  (device.pools.get(pool)?.pool.members ?? [])
    .map((m) => `${m.address}:${m.port} ${m.pod}${m.enabled ? '' : ' draining'}`)
    .sort();

async function statusIp(c: Cluster, name: string): Promise<string | undefined> {
  const s = await c.core.readNamespacedService({ name, namespace: 'default' });
  return s.status?.loadBalancer?.ingress?.[0]?.ip;
}

const has = (ev: RecordingEvents, target: string, reason: string, text?: RegExp) =>
  ev.seen.some((e) => e.target === target && e.reason === reason && (!text || text.test(e.message)));

describe('safe in a shared cluster', () => {
  it('Ingress: an injected or bad path never reaches the load balancer, and the author hears of every problem', async (t) => {
    const { kc } = await useSandbox(t);
    const c = new Cluster(kc);
    const net = kc.makeApiClient(NetworkingV1Api);
    await net.createIngressClass({
      body: { metadata: { name: 'npl' }, spec: { controller: 'npl-lb.io/ingress-controller' } },
    });
    await c.node('n1', { internal: ['192.0.2.201'] });
    await c.service('web', { enabled: null, ports: [{ name: 'http', port: 8080, targetPort: 'http' }] });
    await pod(c, 'web-1', 'n1', [{ podPort: 8080, nodeIP: '192.0.2.201', nodePort: 61000 }]);
    const injected = '/a\n    http-request return status 200 content-type text/plain string pwned';
    const backend = (name: string, port: object = { name: 'http' }) => ({ service: { name, port } });
    const rule = (path: string, pathType: string, b = backend('web')) => ({ path, pathType, backend: b });
    await net.createNamespacedIngress({
      namespace: 'default',
      body: {
        metadata: { name: 'evil' },
        spec: {
          ingressClassName: 'npl',
          tls: [{ hosts: ['ok.example'], secretName: 'ok-tls' }],
          rules: [
            {
              host: 'ok.example',
              http: {
                paths: [
                  rule(injected, 'ImplementationSpecific'),
                  rule('/a b', 'ImplementationSpecific'),
                  rule('/q"x', 'ImplementationSpecific'),
                  rule('/good', 'Prefix'),
                  rule('/missing', 'Prefix', backend('nope')),
                  rule('/noport', 'Prefix', backend('web', { name: 'nosuch' })),
                ],
              },
            },
          ],
        },
      },
    });
    await net.createNamespacedIngress({
      namespace: 'default',
      body: {
        metadata: { name: 'fine' },
        spec: {
          ingressClassName: 'npl',
          rules: [{ host: 'fine.example', http: { paths: [rule('/', 'Prefix')] } }],
        },
      },
    });
    const device = new MemoryLoadBalancer();
    const { events } = await startController(t, kc, device);
    await eventually(() => device.virtualServices.has('c1--ingress-npl'), 5000, 'L7 virtual service');
    await eventually(
      () => has(events, 'default/fine', 'IngressServed'),
      5000,
      'Normal event on the served Ingress',
    );
    const vs = device.virtualServices.get('c1--ingress-npl')!.vs;
    assert.ok(vs.kind === 'l7');
    assert.deepEqual(vs.routes.map((r) => `${r.host}${r.path}`).sort(), ['fine.example/', 'ok.example/good']);
    assert.ok(!JSON.stringify([...device.virtualServices.values()]).includes('pwned'), 'never in the model');
    const ev = (reason: string, text: RegExp) =>
      assert.ok(has(events, 'default/evil', reason, text), `${reason} ${text} on the Ingress`);
    ev('InvalidIngressRule', /spec\.rules\[0\]\.http\.paths\[0\]\.path: .*control character or whitespace/);
    ev('InvalidIngressRule', /spec\.rules\[0\]\.http\.paths\[1\]\.path/);
    ev('InvalidIngressRule', /spec\.rules\[0\]\.http\.paths\[2\]\.path: .*quote/);
    ev('BackendNotFound', /paths\[4\]\.backend: Service default\/nope not found/);
    ev('BackendPortNotFound', /paths\[5\]\.backend: .*"nosuch"/);
    ev(
      'InvalidTLSSecret',
      /spec\.tls\[0\]: Secret default\/ok-tls not found.*hosts ok\.example not served on HTTPS/,
    );
    assert.ok(!has(events, 'default/evil', 'IngressServed'), 'an Ingress with problems is not called served');
    assert.equal(members(device, 'c1--default-web-http.l7').length, 1, 'the valid rule is served');
  });

  it('NodePortLocal annotations are checked, not trusted: one member per Pod and port, from its own Node', async (t) => {
    const { kc } = await useSandbox(t);
    const c = new Cluster(kc);
    await c.node('n1', { internal: ['192.0.2.201'] });
    await c.node('n2', { internal: ['192.0.2.202'] });
    await c.service('web', {
      type: 'LoadBalancer',
      enabled: null,
      ports: [{ name: 'http', port: 80, targetPort: 'http' }],
    });
    const e = (nodeIP: string, nodePort: number, extra: Partial<Entry> = {}): Entry => ({
      podPort: 8080,
      nodeIP,
      nodePort,
      ...extra,
    });
    await pod(c, 'good', 'n1', [e('192.0.2.201', 61000)]);
    await pod(c, 'other', 'n2', [e('192.0.2.202', 61000)]);
    await pod(c, 'foreign', 'n1', [e('192.0.2.202', 61009)]);
    await pod(c, 'family', 'n1', [e('::1', 61001)]);
    await pod(c, 'nonip', 'n1', [e('not-an-ip', 61002)]);
    await pod(c, 'dup', 'n2', [e('192.0.2.202', 61003), e('192.0.2.202', 61003)]);
    await pod(c, 'conflict', 'n2', [e('192.0.2.202', 61004), e('192.0.2.202', 61005)]);
    await pod(
      c,
      'flood',
      'n2',
      Array.from({ length: 1000 }, (_, i) => e('192.0.2.202', 60000 + i)),
    );
    await pod(
      c,
      'wide',
      'n1',
      Array.from({ length: 1000 }, (_, i) => e('192.0.2.201', 50000 + i, { podPort: 7000 + i })).concat(
        e('192.0.2.201', 61006),
      ),
    );
    const device = new MemoryLoadBalancer();
    const { events } = await startController(t, kc, device);
    const pool = 'c1--default-web-http';
    const want = [
      '192.0.2.201:61000 default/good',
      '192.0.2.201:61006 default/wide',
      '192.0.2.202:61000 default/other',
      '192.0.2.202:61003 default/dup',
    ];
    await eventually(() => members(device, pool).length === want.length, 5000, 'pool built');
    assert.deepEqual(members(device, pool), want);
    for (const [name, text] of [
      ['foreign', /nodeIP 192\.0\.2\.202 is not an address of the Pod's Node n1/],
      ['family', /"::1" is not an IPv4 address/],
      ['nonip', /"not-an-ip" is not an IP address/],
      ['conflict', /2 different entries claim podPort 8080/],
      ['flood', /1000 different entries claim podPort 8080/],
    ] as const) {
      await eventually(
        () => has(events, `default/${name}`, 'NodePortLocalRejected', text),
        2000,
        `Event on Pod ${name}`,
      );
    }
    assert.ok(
      has(events, 'default/web', 'NodePortLocalRejected', /5 Pod\(s\) dropped/),
      'and on the Service',
    );
    // The bad Pods freeze nothing: another Pod's readiness change applies within 2 s.
    const t0 = Date.now();
    await setReady(c, 'other', false);
    await eventually(
      () => members(device, pool).includes('192.0.2.202:61000 default/other draining'),
      2000,
      'drained',
    );
    assert.ok(Date.now() - t0 < 2000);
    // The Node gains the address: the foreign entry is now the Pod's own and counts.
    await c.setNodeAddresses('n1', { internal: ['192.0.2.201', '192.0.2.202'] });
    await eventually(
      () => members(device, pool).includes('192.0.2.202:61009 default/foreign'),
      2000,
      'node change',
    );
  });

  it('VIPs have owners: no hijack, nothing outside vip.cidrs, the same after a restart', async (t) => {
    const { kc } = await useSandbox(t);
    const c = new Cluster(kc);
    await c.node('n1', { internal: ['192.0.2.201'] });
    await pod(c, 'web-1', 'n1', [{ podPort: 8080, nodeIP: '192.0.2.201', nodePort: 61000 }]);
    const lb = (name: string) =>
      c.service(name, {
        type: 'LoadBalancer',
        enabled: null,
        selector: { app: 'web' },
        ports: [{ name: 'http', port: 80, targetPort: 'http' }],
      });
    await lb('incumbent');
    const device = new MemoryLoadBalancer();
    const first = await startController(t, kc, device);
    let vip: string | undefined;
    await eventually(async () => (vip = await statusIp(c, 'incumbent')) !== undefined, 5000, 'incumbent VIP');
    await lb('thief');
    await c.patchService('thief', { spec: { loadBalancerIP: vip } });
    await lb('outside');
    await c.patchService('outside', { metadata: { annotations: { [VIP_ANNOTATION]: '198.51.100.7' } } });
    await lb('garbage');
    await c.patchService('garbage', {
      metadata: { annotations: { [VIP_ANNOTATION]: '10.0.0.1\nbind *:22' } },
    });
    await lb('bystander');
    await eventually(
      () => has(first.events, 'default/thief', 'VIPConflict', new RegExp(vip!.replace(/\./g, '\\.'))),
      5000,
      'VIPConflict',
    );
    await eventually(
      () => has(first.events, 'default/outside', 'InvalidVIP', /outside vip\.cidrs/),
      5000,
      'InvalidVIP',
    );
    await eventually(
      () => has(first.events, 'default/garbage', 'InvalidVIP', /not an IPv4 address/),
      5000,
      'garbage',
    );
    await eventually(
      async () => (await statusIp(c, 'bystander')) !== undefined,
      5000,
      'others keep applying',
    );
    const check = async () => {
      assert.equal(await statusIp(c, 'incumbent'), vip, 'the incumbent keeps its VIP');
      const l4 = device.virtualServices.get('c1--default-incumbent-TCP-80')!.vs;
      assert.ok(l4.kind === 'l4' && l4.vip === vip);
      for (const name of ['thief', 'outside', 'garbage']) {
        assert.equal(await statusIp(c, name), undefined, `${name} stays pending`);
        assert.ok(!device.virtualServices.has(`c1--default-${name}-TCP-80`));
      }
    };
    await check();
    // A restart: the published status is the record; the same owners win.
    await first.stop();
    const second = await startController(t, kc, device);
    await eventually(
      () => has(second.events, 'default/thief', 'VIPConflict'),
      5000,
      'VIPConflict after restart',
    );
    await check();
  });

  it("the shared IngressClass VIP is the class's: a tenant's npl-lb.io/vip on its Ingress is ignored with a Warning, the class's annotation sets it", async (t) => {
    const { kc } = await useSandbox(t);
    const c = new Cluster(kc);
    const net = kc.makeApiClient(NetworkingV1Api);
    await net.createIngressClass({
      body: { metadata: { name: 'npl' }, spec: { controller: 'npl-lb.io/ingress-controller' } },
    });
    await c.node('n1', { internal: ['192.0.2.201'] });
    await c.service('web', { enabled: null, ports: [{ name: 'http', port: 8080, targetPort: 'http' }] });
    await pod(c, 'web-1', 'n1', [{ podPort: 8080, nodeIP: '192.0.2.201', nodePort: 61000 }]);
    const ingress = (name: string, host: string, annotations: Record<string, string> = {}) =>
      net.createNamespacedIngress({
        namespace: 'default',
        body: {
          metadata: { name, annotations },
          spec: {
            ingressClassName: 'npl',
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
        },
      });
    await ingress('team-a', 'a.example');
    const device = new MemoryLoadBalancer();
    const { events } = await startController(t, kc, device);
    const classVip = () => {
      const vs = device.virtualServices.get('c1--ingress-npl')?.vs;
      return vs?.vip;
    };
    let vip: string | undefined;
    await eventually(() => (vip = classVip()) !== undefined, 5000, 'the class VIP');
    // A tenant asks to move the shared VIP from its own Ingress.
    await ingress('team-b', 'b.example', { [VIP_ANNOTATION]: '192.0.2.14' });
    await eventually(
      () => has(events, 'default/team-b', 'VIPAnnotationIgnored', /IngressClass npl is shared/),
      5000,
      'Warning on the tenant Ingress',
    );
    await eventually(
      () =>
        device.virtualServices.get('c1--ingress-npl')!.vs.kind === 'l7' &&
        (device.virtualServices.get('c1--ingress-npl')!.vs as { routes: { host: string }[] }).routes.some(
          (r) => r.host === 'b.example',
        ),
      5000,
      'the tenant Ingress is served',
    );
    assert.equal(classVip(), vip, 'the shared VIP did not move');
    // The class's owner moves it on the IngressClass.
    await net.patchIngressClass(
      { name: 'npl', body: { metadata: { annotations: { [VIP_ANNOTATION]: '192.0.2.15' } } } },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
    await eventually(() => classVip() === '192.0.2.15', 5000, 'the class annotation moves the VIP');
  });

  it('a failure the device no longer has is cleared: status published, a Normal event', async (t) => {
    const { kc } = await useSandbox(t);
    const c = new Cluster(kc);
    await c.node('n1', { internal: ['192.0.2.201'] });
    await pod(c, 'web-1', 'n1', [{ podPort: 8080, nodeIP: '192.0.2.201', nodePort: 61000 }]);
    await c.service('web', {
      type: 'LoadBalancer',
      enabled: null,
      ports: [{ name: 'http', port: 80, targetPort: 'http' }],
    });
    const device = new MemoryLoadBalancer();
    // Every write of the virtual service fails on the wire; the one that "timed out" did land on
    // the device later (as a slow controller's write can).
    let attempted: Change | undefined;
    const fault = (ch: Change): ApplyError | undefined => {
      if (ch.kind !== 'virtualService' || ch.op === 'delete') return undefined;
      attempted ??= ch;
      return { code: 'Unavailable', message: 'timed out', terminal: false };
    };
    const { events } = await startController(t, kc, device, fault);
    await eventually(
      () => has(events, 'default/web', 'SyncLoadBalancerFailed'),
      5000,
      'SyncLoadBalancerFailed',
    );
    assert.equal(await statusIp(c, 'web'), undefined, 'pending while it fails');
    await eventually(
      () => has(events, 'default/web', 'EnsuringLoadBalancer'),
      2000,
      'Ensuring before the failure',
    );
    assert.ok(attempted && attempted.op !== 'delete' && attempted.kind === 'virtualService');
    device.createVirtualService('c1', attempted.desired);
    await eventually(async () => (await statusIp(c, 'web')) !== undefined, 5000, 'the address is published');
    await eventually(
      () => has(events, 'default/web', 'EnsuredLoadBalancer', /is live/),
      2000,
      'a Normal event says it is over',
    );
  });

  it('one terminally failing object is parked, never blocks the rest, and is retried when it changes', async (t) => {
    const { kc } = await useSandbox(t);
    const c = new Cluster(kc);
    await c.node('n1', { internal: ['192.0.2.201'] });
    for (const app of ['a', 'b']) {
      await c.nplPod(`${app}-1`, {
        node: 'n1',
        labels: { app },
        entries: [{ nodeIP: '192.0.2.201', nodePort: app === 'a' ? 61000 : 61001 }],
      });
      await c.service(app, {
        type: 'LoadBalancer',
        enabled: null,
        selector: { app },
        ports: [{ name: 'http', port: 80, targetPort: 'http' }],
      });
    }
    const device = new MemoryLoadBalancer();
    let refused = 0;
    const fault = (ch: Change): ApplyError | undefined => {
      if (ch.kind !== 'pool' || ch.name !== 'c1--default-a-http' || ch.op === 'delete') return undefined;
      if (ch.desired.members.some((m) => !m.enabled)) return undefined;
      refused++;
      return { code: 'Invalid', message: 'refused by the device', terminal: true };
    };
    await startController(t, kc, device, fault);
    await eventually(() => device.virtualServices.has('c1--default-b-TCP-80'), 5000, 'b applies');
    await eventually(() => refused >= 1, 5000, 'a refused');
    const before = refused;
    // Changes elsewhere do not resend the same doomed write.
    await setReady(c, 'b-1', false);
    await eventually(
      () => members(device, 'c1--default-b-http')[0]?.endsWith('draining') === true,
      2000,
      'b drains',
    );
    assert.equal(refused, before, 'the parked pool is not sent again while it is the same');
    // Its own desired state changes: tried again, and this time taken.
    await setReady(c, 'a-1', false);
    await eventually(() => members(device, 'c1--default-a-http').length === 1, 2000, 'a retried and applied');
  });
});
