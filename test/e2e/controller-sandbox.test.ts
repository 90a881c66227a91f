/**
 * The controller on the sandbox with the memory adapter: pools from NodePortLocal annotations,
 * auto-annotation, status, Events, Ingresses, ownership between clusters, restart without writes.
 */
import assert from 'node:assert/strict';
import { describe, it, type TestContext } from 'node:test';
import { type KubeConfig, PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import { MemoryAdapter } from '../../adapters/memory/adapter.ts';
import { MemoryLoadBalancer } from '../../adapters/memory/device.ts';
import { parseControllerConfig } from '../../src/config/controller-config.ts';
import { NplController } from '../../src/controller/controller.ts';
import {
  NPL_ENABLED_ANNOTATION,
  NPL_MANAGED_ANNOTATION,
  NPL_POD_ANNOTATION,
} from '../../src/kube/annotations.ts';
import { EventRecorder } from '../../src/kube/events.ts';
import { Cluster, RecordingEvents } from '../support/cluster.ts';
import { eventually, useSandbox } from '../support/sandbox.ts';

async function startController(
  t: Pick<TestContext, 'after'>,
  kc: KubeConfig,
  device: MemoryLoadBalancer,
  clusterName = 'c1',
  extra = '',
  adapter = new MemoryAdapter({ owner: clusterName, device }),
) {
  const config = parseControllerConfig(`clusterName: ${clusterName}\nvip: {cidrs: [192.0.2.0/24]}\n${extra}`);
  const events = new RecordingEvents(new EventRecorder(kc, 'npl-lb-controller', 'test', { dedupeMs: 0 }));
  const c = new NplController({
    kubeConfig: kc,
    config,
    adapter,
    events,
    coalesceMs: 20,
    sweepIntervalMs: 200,
  });
  let stopped = false;
  const stop = async () => {
    if (!stopped) {
      stopped = true;
      await c.stop();
    }
  };
  t.after(stop);
  await c.start();
  return { c, events, stop };
}

const npl = (nodeIP: string, nodePort: number, podPort = 8080) =>
  JSON.stringify([{ podPort, nodeIP, nodePort, protocol: 'tcp', ipFamily: 'IPv4' }]);

async function readyPod(
  c: Cluster,
  name: string,
  node: string,
  ann?: string,
  ready = true,
  labels = { app: 'web' },
) {
  await c.pod(name, { node, labels, ports: [{ name: 'http', containerPort: 8080 }] });
  for (const e of ann ? (JSON.parse(ann) as { nodeIP: string }[]) : []) await c.ensureNode(node, e.nodeIP);
  await c.patchPodStatus(name, {
    metadata: ann ? { annotations: { [NPL_POD_ANNOTATION]: ann } } : {},
    status: {
      phase: 'Running',
      podIP: `10.244.0.${name.length}`,
      conditions: [{ type: 'Ready', status: ready ? 'True' : 'False' }],
    },
  });
}

const members = (device: MemoryLoadBalancer, pool: string) =>
  (device.pools.get(pool)?.pool.members ?? [])
    .map((m) => `${m.address}:${m.port}@${m.node}${m.enabled ? '' : ' draining'}`)
    .sort();

describe('controller on the sandbox (memory adapter)', () => {
  it('builds the pool from NodePortLocal annotations, annotates the Service itself, publishes the VIP', async (t) => {
    const { kc } = await useSandbox(t);
    const c = new Cluster(kc);
    const device = new MemoryLoadBalancer();
    await c.service('web', {
      type: 'LoadBalancer',
      enabled: null,
      ports: [{ name: 'http', port: 80, targetPort: 'http' }],
    });
    await readyPod(c, 'a', 'n1', npl('192.0.2.201', 61000));
    await readyPod(c, 'b', 'n2', npl('192.0.2.202', 61000), false);
    await readyPod(c, 'waiting', 'n3');
    const { c: ctl, events } = await startController(t, kc, device, 'c1', 'defaultLoadBalancer: true');
    await eventually(() => members(device, 'c1--default-web-http').length === 2, 5000, 'pool');
    assert.deepEqual(members(device, 'c1--default-web-http'), [
      '192.0.2.201:61000@n1',
      '192.0.2.202:61000@n2 draining',
    ]);
    const vs = device.virtualServices.get('c1--default-web-TCP-80')!.vs;
    assert.ok(vs.kind === 'l4' && vs.vip.startsWith('192.0.2.'));
    await eventually(
      async () => {
        const s = await c.core.readNamespacedService({ name: 'web', namespace: 'default' });
        return (
          s.metadata?.annotations?.[NPL_ENABLED_ANNOTATION] === 'true' &&
          s.metadata.annotations[NPL_MANAGED_ANNOTATION] === 'true'
        );
      },
      5000,
      'auto-annotated',
    );
    await eventually(
      async () => {
        const s = await c.core.readNamespacedService({ name: 'web', namespace: 'default' });
        return s.status?.loadBalancer?.ingress?.[0]?.ip === (vs.kind === 'l4' ? vs.vip : '');
      },
      5000,
      'status published',
    );
    assert.ok(
      events.seen.some(
        (e) => e.reason === 'WaitingForNodePortLocal' && e.message.includes('default/waiting'),
      ),
    );
    const doc = ctl.state.document();
    assert.equal(doc.pools[0]!.lastApply?.ok, true);
    await eventually(
      async () =>
        /npl_lb_controller_pool_members\{pool="c1--default-web-http",state="draining"\} 1/.test(
          await ctl.metrics.registry.metrics(),
        ),
      5000,
      'members per pool recorded',
    );
    const metrics = await ctl.metrics.registry.metrics();
    assert.match(metrics, /npl_lb_controller_pool_members\{pool="c1--default-web-http",state="enabled"\} 1/);
    assert.match(metrics, /npl_lb_controller_queue_depth \d+/);
    // An annotation removed from a Pod removes its member; readiness flips enable it.
    await c.patchPodStatus('a', { metadata: { annotations: { [NPL_POD_ANNOTATION]: null } } });
    await c.patchPodStatus('b', { status: { conditions: [{ type: 'Ready', status: 'True' }] } });
    await eventually(
      () => members(device, 'c1--default-web-http').join() === '192.0.2.202:61000@n2',
      5000,
      'a gone, b ready',
    );
    await eventually(
      async () =>
        /npl_lb_controller_annotation_to_apply_seconds_count [1-9]/.test(
          await ctl.metrics.registry.metrics(),
        ),
      5000,
      'the annotation change was timed to its apply',
    );
  });

  it('LoadBalancer -> ClusterIP removes what it made and its own annotation; a person’s annotation stays', async (t) => {
    const { kc } = await useSandbox(t);
    const c = new Cluster(kc);
    const device = new MemoryLoadBalancer();
    await c.service('mine', { type: 'LoadBalancer', enabled: null, ports: [{ port: 80, targetPort: 8080 }] });
    await c.service('theirs', {
      type: 'LoadBalancer',
      selector: { app: 'x' },
      ports: [{ port: 81, targetPort: 8080 }],
    });
    await startController(t, kc, device, 'c1', 'defaultLoadBalancer: true');
    await eventually(() => device.virtualServices.size === 2, 5000, 'two VS');
    const ann = async (name: string) =>
      (await c.core.readNamespacedService({ name, namespace: 'default' })).metadata?.annotations ?? {};
    await eventually(async () => (await ann('mine'))[NPL_MANAGED_ANNOTATION] === 'true', 5000, 'ours marked');
    assert.equal(
      (await ann('theirs'))[NPL_MANAGED_ANNOTATION],
      undefined,
      'a person annotated it: no marker',
    );
    for (const name of ['mine', 'theirs']) await c.patchService(name, { spec: { type: 'ClusterIP' } });
    await eventually(
      () => device.virtualServices.size === 0 && device.pools.size === 0,
      5000,
      'removed from the LB',
    );
    await eventually(
      async () => (await ann('mine'))[NPL_ENABLED_ANNOTATION] === undefined,
      5000,
      'our annotation removed',
    );
    assert.equal(
      (await ann('theirs'))[NPL_ENABLED_ANNOTATION],
      'true',
      'never removes a person’s annotation',
    );
  });

  it('Ingress backends are annotated (port by name, reference counted over two Ingresses); class changes follow', async (t) => {
    const { kc } = await useSandbox(t);
    const c = new Cluster(kc);
    const device = new MemoryLoadBalancer();
    const { NetworkingV1Api } = await import('@kubernetes/client-node');
    const net = kc.makeApiClient(NetworkingV1Api);
    await net.createIngressClass({
      body: { metadata: { name: 'npl' }, spec: { controller: 'npl-lb.io/ingress-controller' } },
    });
    await net.createIngressClass({
      body: { metadata: { name: 'other' }, spec: { controller: 'example.com/other' } },
    });
    await c.service('api', {
      enabled: null,
      ports: [
        { name: 'grpc', port: 9000 },
        { name: 'http', port: 8080, targetPort: 'http' },
      ],
    });
    await readyPod(c, 'api-1', 'n1', npl('192.0.2.201', 61000), true, { app: 'api' });
    const ing = (name: string) => ({
      metadata: { name },
      spec: {
        ingressClassName: 'npl',
        rules: [
          {
            host: `${name}.example`,
            http: {
              paths: [
                {
                  path: '/',
                  pathType: 'Prefix',
                  backend: { service: { name: 'api', port: { name: 'http' } } },
                },
              ],
            },
          },
        ],
      },
    });
    await net.createNamespacedIngress({ namespace: 'default', body: ing('one') });
    await net.createNamespacedIngress({ namespace: 'default', body: ing('two') });
    await startController(t, kc, device);
    const ann = async () =>
      (await c.core.readNamespacedService({ name: 'api', namespace: 'default' })).metadata?.annotations ?? {};
    await eventually(async () => (await ann())[NPL_MANAGED_ANNOTATION] === 'true', 5000, 'backend annotated');
    await eventually(() => device.virtualServices.get('c1--ingress-npl') !== undefined, 5000, 'L7 VS');
    const l7 = device.virtualServices.get('c1--ingress-npl')!.vs;
    assert.ok(l7.kind === 'l7');
    assert.deepEqual(l7.routes.map((r) => `${r.host}${r.path}->${r.pool}`).sort(), [
      'one.example/->c1--default-api-http.l7',
      'two.example/->c1--default-api-http.l7',
    ]);
    assert.deepEqual(members(device, 'c1--default-api-http.l7'), ['192.0.2.201:61000@n1']);
    await net.deleteNamespacedIngress({ name: 'one', namespace: 'default' });
    await new Promise((r) => setTimeout(r, 300));
    assert.equal((await ann())[NPL_MANAGED_ANNOTATION], 'true', 'still referenced by the other Ingress');
    await net.patchNamespacedIngress(
      { name: 'two', namespace: 'default', body: { spec: { ingressClassName: 'other' } } },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
    await eventually(
      async () => (await ann())[NPL_ENABLED_ANNOTATION] === undefined,
      5000,
      'class changed: annotation removed',
    );
    await eventually(() => device.virtualServices.size === 0, 5000, 'L7 VS gone');
  });

  it('two clusters share one load balancer without touching each other; a restart converges with no writes', async (t) => {
    const { kc } = await useSandbox(t);
    const c = new Cluster(kc);
    const device = new MemoryLoadBalancer();
    await c.service('web', { type: 'LoadBalancer', ports: [{ port: 80, targetPort: 8080 }] });
    await readyPod(c, 'a', 'n1', npl('192.0.2.201', 61000));
    const one = await startController(t, kc, device, 'c1', 'defaultLoadBalancer: true');
    const two = await startController(t, kc, device, 'c2', 'defaultLoadBalancer: true');
    await eventually(
      () =>
        device.virtualServices.has('c1--default-web-TCP-80') &&
        device.virtualServices.has('c2--default-web-TCP-80'),
      5000,
      'both',
    );
    assert.equal(device.virtualServices.get('c1--default-web-TCP-80')!.owner, 'c1');
    assert.equal(device.virtualServices.get('c2--default-web-TCP-80')!.owner, 'c2');
    await one.c.settled();
    await two.stop();
    await new Promise((r) => setTimeout(r, 200));
    await one.stop();
    const writes = device.writes.length;
    const again = await startController(t, kc, device, 'c1', 'defaultLoadBalancer: true');
    await eventually(() => again.c.stats.lbReconciles >= 1, 5000, 'first reconcile');
    await again.c.settled();
    await new Promise((r) => setTimeout(r, 200));
    assert.equal(
      device.writes.length,
      writes,
      `no writes after restart: ${device.writes.slice(writes).join(', ')}`,
    );
    assert.ok(device.virtualServices.has('c2--default-web-TCP-80'), 'c2’s objects are untouched');
    // Drift on the load balancer (a member removed by hand) is repaired by the periodic sweep.
    const stored = device.pools.get('c1--default-web-80')!;
    stored.pool.members = [];
    await eventually(
      () => (device.pools.get('c1--default-web-80')?.pool.members.length ?? 0) === 1,
      5000,
      'sweep repaired drift',
    );
    // The sweep's whole passes are counted with their CPU, and its period kept within its bounds
    // (200 ms here, stretched by a whole pass's cost, at most ten times).
    const metric = async (name: string) =>
      Number(new RegExp(`^${name} (\\S+)$`, 'm').exec(await again.c.metrics.registry.metrics())?.[1] ?? NaN);
    assert.ok((await metric('npl_lb_controller_whole_passes_total')) >= 1);
    assert.ok((await metric('npl_lb_controller_whole_pass_cpu_seconds_total')) > 0);
    assert.ok((await metric('npl_lb_controller_whole_pass_last_cpu_seconds')) > 0);
    const period = await metric('npl_lb_controller_sweep_period_seconds');
    assert.ok(period >= 0.2 && period <= 2, `sweep period ${period} s`);
  });

  it("the sweep's cost counts its read of the device, which goes on behind the passes", async (t) => {
    const { kc } = await useSandbox(t);
    const c = new Cluster(kc);
    await c.node('n1', { internal: ['10.0.0.1'] });
    await c.service('web', { type: 'LoadBalancer', ports: [{ name: 'http', port: 80, targetPort: 8080 }] });
    const device = new MemoryLoadBalancer();
    /** CPU (ms) each read of the device burns from now on, as a large device's lists would. */
    let burnMs = 0;
    const cpuMs = () => {
      const u = process.cpuUsage();
      return (u.user + u.system) / 1000;
    };
    class CostlyRead extends MemoryAdapter {
      override async observe() {
        const o = await super.observe();
        for (const until = cpuMs() + burnMs; cpuMs() < until;);
        return o;
      }
    }
    const { c: ctl } = await startController(
      t,
      kc,
      device,
      'c1',
      'defaultLoadBalancer: true',
      new CostlyRead({ owner: 'c1', device }),
    );
    await eventually(() => device.virtualServices.has('c1--default-web-TCP-80'), 5000, 'first sync');
    await ctl.settled();
    const metric = async (name: string) =>
      Number(new RegExp(`^${name} (\\S+)$`, 'm').exec(await ctl.metrics.registry.metrics())?.[1] ?? NaN);
    burnMs = 80;
    const passes = await metric('npl_lb_controller_whole_passes_total');
    // The sweep (every 200 ms here) reads behind the passes; the whole pass after it plans only.
    await eventually(
      async () => (await metric('npl_lb_controller_whole_passes_total')) > passes,
      10_000,
      'a sweep',
    );
    const last = await metric('npl_lb_controller_whole_pass_last_cpu_seconds');
    assert.ok(last >= 0.08, `the last sweep cost ${last} s of CPU, its read 0.08 s at least`);
    // The period stretches by that cost: 80 ms at 0.5 % of a core is 16 s, kept to ten periods.
    assert.equal(await metric('npl_lb_controller_sweep_period_seconds'), 2);
  });

  it('NodePort and ClusterIP modes; LoadBalancer -> ClusterIP -> LoadBalancer; selector and label changes', async (t) => {
    const { kc } = await useSandbox(t);
    const c = new Cluster(kc);
    await c.node('n1', { internal: ['10.0.0.1'] });
    await c.node('n2', { internal: ['10.0.0.2'] });
    for (const n of ['n1', 'n2']) {
      await c.core.patchNodeStatus(
        {
          name: n,
          body: { status: { conditions: [{ type: 'Ready', status: n === 'n1' ? 'True' : 'False' }] } },
        },
        (await import('@kubernetes/client-node')).setHeaderOptions(
          'Content-Type',
          'application/merge-patch+json',
        ),
      );
    }
    await c.service('web', {
      type: 'LoadBalancer',
      enabled: null,
      ports: [{ name: 'http', port: 80, targetPort: 'http' }],
    });
    await readyPod(c, 'a', 'n1');
    const npDevice = new MemoryLoadBalancer();
    await startController(t, kc, npDevice, 'np', 'defaultLoadBalancer: true\nserviceType: NodePort');
    const nodePort = (await c.core.readNamespacedService({ name: 'web', namespace: 'default' })).spec!
      .ports![0]!.nodePort!;
    await eventually(
      () => members(npDevice, 'np--default-web-http').join() === `10.0.0.1:${nodePort}@n1`,
      5000,
      'NodePort: Ready nodes',
    );
    const cipDevice = new MemoryLoadBalancer();
    await startController(t, kc, cipDevice, 'cip', 'defaultLoadBalancer: true\nserviceType: ClusterIP');
    await eventually(
      () => members(cipDevice, 'cip--default-web-http').join() === '10.244.0.1:8080@n1',
      5000,
      'ClusterIP: Pod IPs',
    );
    await c.patchService('web', { spec: { type: 'ClusterIP' } });
    await eventually(() => cipDevice.virtualServices.size === 0, 5000, 'gone as ClusterIP');
    await c.patchService('web', { spec: { type: 'LoadBalancer' } });
    await eventually(() => cipDevice.virtualServices.size === 1, 5000, 'back as LoadBalancer');
    await c.patchService('web', { spec: { selector: { app: 'none' } } });
    await eventually(
      () => members(cipDevice, 'cip--default-web-http').length === 0,
      5000,
      'selector matches nothing',
    );
    await c.patchService('web', { spec: { selector: { app: 'web' } } });
    await readyPod(c, 'bb', 'n1');
    await eventually(() => members(cipDevice, 'cip--default-web-http').length === 2, 5000, 'Pod added');
    await c.patchPod('bb', { metadata: { labels: { app: 'other' } } });
    await eventually(() => members(cipDevice, 'cip--default-web-http').length === 1, 5000, 'Pod relabelled');
    await c.core.deleteNamespacedPod({ name: 'a', namespace: 'default' });
    await eventually(() => members(cipDevice, 'cip--default-web-http').length === 0, 5000, 'Pod deleted');
  });

  it('default IngressClass, IngressClass deletion, and namespace include/exclude', async (t) => {
    const { kc } = await useSandbox(t);
    const c = new Cluster(kc);
    const device = new MemoryLoadBalancer();
    const { NetworkingV1Api } = await import('@kubernetes/client-node');
    const net = kc.makeApiClient(NetworkingV1Api);
    await net.createIngressClass({
      body: {
        metadata: { name: 'npl', annotations: { 'ingressclass.kubernetes.io/is-default-class': 'true' } },
        spec: { controller: 'npl-lb.io/ingress-controller' },
      },
    });
    await c.core.createNamespace({ body: { metadata: { name: 'skipped' } } });
    for (const ns of ['default', 'skipped']) {
      await c.service('api', { namespace: ns, enabled: null, ports: [{ port: 80 }] });
      await net.createNamespacedIngress({
        namespace: ns,
        body: {
          metadata: { name: 'noclass' },
          spec: { defaultBackend: { service: { name: 'api', port: { number: 80 } } } },
        },
      });
    }
    await startController(t, kc, device, 'c1', 'namespaces: {exclude: [skipped]}');
    const ann = async (ns: string) =>
      (await c.core.readNamespacedService({ name: 'api', namespace: ns })).metadata?.annotations ?? {};
    await eventually(
      async () => (await ann('default'))[NPL_MANAGED_ANNOTATION] === 'true',
      5000,
      'default class honoured',
    );
    await eventually(() => device.virtualServices.has('c1--ingress-npl'), 5000, 'L7 VS');
    assert.equal((await ann('skipped'))[NPL_ENABLED_ANNOTATION], undefined, 'excluded namespace untouched');
    await net.deleteIngressClass({ name: 'npl' });
    await eventually(
      async () => (await ann('default'))[NPL_ENABLED_ANNOTATION] === undefined,
      5000,
      'annotation removed with the class',
    );
    await eventually(() => device.virtualServices.size === 0, 5000, 'L7 VS removed with the class');
  });
});
