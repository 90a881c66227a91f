/**
 * The NodePortLocal agent on the sandbox: selection, lifecycle, allocation, restore, with the
 * in-memory forwarding backend (rules as data) and real port reservations on loopback node IPs.
 */
import assert from 'node:assert/strict';
import { createServer } from 'node:net';
import { describe, it } from 'node:test';
import { MemoryBackend } from '../../src/agent/rules/memory.ts';
import { NPL_POD_ANNOTATION } from '../../src/kube/annotations.ts';
import { Cluster, startAgent } from '../support/cluster.ts';
import { eventually, useSandbox } from '../support/sandbox.ts';

const N1 = '127.0.10.1';

async function setup(t: Parameters<typeof useSandbox>[0]) {
  const sb = await useSandbox(t);
  const c = new Cluster(sb.kc);
  await c.node('n1', { internal: [N1] });
  await c.node('n2', { internal: ['127.0.10.2'] });
  return { ...sb, c };
}

const rules = (b: unknown) =>
  [...(b as MemoryBackend).rules.values()]
    .map((r) => `${r.protocol}/${r.nodePort}->${r.podIP}:${r.podPort}`)
    .sort();

describe('NPL agent on the sandbox: selection', () => {
  it('writes Antrea-format annotations for selected Pods on its node only, with a DNAT rule each', async (t) => {
    const { c, kc } = await setup(t);
    await c.service('web', { ports: [{ port: 80, targetPort: 8080 }] });
    await c.pod('web-1', { node: 'n1', ips: ['10.244.1.5'] });
    await c.pod('web-2', { node: 'n2', ips: ['10.244.2.5'] });
    const a = await startAgent(t, kc, { nodeName: 'n1' });
    await eventually(async () => (await c.annotationText('web-1')) !== undefined, 5000, 'annotation');
    const text = (await c.annotationText('web-1'))!;
    assert.match(
      text,
      /^\[\{"podPort":8080,"nodeIP":"127\.0\.10\.1","nodePort":61\d{3},"protocol":"tcp","ipFamily":"IPv4"\}\]$/,
    );
    const nodePort = JSON.parse(text)[0].nodePort as number;
    assert.deepEqual(rules(a.backend), [`tcp/${nodePort}->10.244.1.5:8080`]);
    assert.equal(await c.annotationText('web-2'), undefined, 'a Pod on another node is not ours');
  });

  it('ignores Services that are not eligible, and removes mappings when selection stops', async (t) => {
    const { c, kc } = await setup(t);
    await c.service('np', { type: 'NodePort', selector: { app: 'a' }, ports: [{ port: 80 }] });
    await c.service('cap', { enabled: 'True', selector: { app: 'b' }, ports: [{ port: 80 }] });
    await c.service('sctp', { selector: { app: 'c' }, ports: [{ port: 80, protocol: 'SCTP' }] });
    await c.service('lb', { type: 'LoadBalancer', selector: { app: 'd' }, ports: [{ port: 80 }] });
    for (const app of ['a', 'b', 'c', 'd'])
      await c.pod(`p-${app}`, { node: 'n1', labels: { app }, ips: [`10.244.1.${app.charCodeAt(0)}`] });
    const a = await startAgent(t, kc, { nodeName: 'n1' });
    await eventually(
      async () => (await c.annotationText('p-d')) !== undefined,
      5000,
      'LoadBalancer pod annotated',
    );
    await a.agent.settled();
    for (const app of ['a', 'b', 'c'])
      assert.equal(await c.annotationText(`p-${app}`), undefined, `p-${app}`);
    // LoadBalancer -> NodePort: selection stops; the annotation key goes away.
    await c.patchService('lb', { spec: { type: 'NodePort' } });
    await eventually(
      async () => (await c.annotationText('p-d')) === undefined,
      5000,
      'removed after type change',
    );
    assert.deepEqual(rules(a.backend), []);
  });

  it('follows un-annotation, annotation values, selector and label changes, port removal', async (t) => {
    const { c, kc } = await setup(t);
    await c.service('web', {
      ports: [
        { name: 'a', port: 80, targetPort: 8080 },
        { name: 'b', port: 81, targetPort: 8081 },
      ],
    });
    await c.pod('web-1', { node: 'n1', ips: ['10.244.1.5'] });
    await startAgent(t, kc, { nodeName: 'n1' });
    const ports = async () => (await c.entries('web-1')).map((e) => e.podPort).sort();
    await eventually(async () => (await ports()).length === 2, 5000, 'two ports');
    await c.patchService('web', { spec: { ports: [{ name: 'a', port: 80, targetPort: 8080 }] } });
    await eventually(async () => (await ports()).join() === '8080', 5000, 'port removed');
    await c.patchService('web', { metadata: { annotations: { 'nodeportlocal.antrea.io/enabled': 'yes' } } });
    await eventually(async () => (await c.annotationText('web-1')) === undefined, 5000, 'not exactly "true"');
    await c.patchService('web', { metadata: { annotations: { 'nodeportlocal.antrea.io/enabled': 'true' } } });
    await eventually(async () => (await ports()).join() === '8080', 5000, 'back');
    await c.patchPod('web-1', { metadata: { labels: { app: 'other' } } });
    await eventually(async () => (await c.annotationText('web-1')) === undefined, 5000, 'labels changed');
    await c.patchPod('web-1', { metadata: { labels: { app: 'web' } } });
    await eventually(async () => (await ports()).join() === '8080', 5000, 'labels back');
    await c.patchService('web', { spec: { selector: { app: 'nope' } } });
    await eventually(async () => (await c.annotationText('web-1')) === undefined, 5000, 'selector changed');
    await c.patchService('web', { spec: { selector: { app: 'web' } } });
    await eventually(async () => (await ports()).join() === '8080', 5000, 'selector back');
    await c.patchService('web', { metadata: { annotations: { 'nodeportlocal.antrea.io/enabled': null } } });
    await eventually(async () => (await c.annotationText('web-1')) === undefined, 5000, 'un-annotated');
    await c.patchService('web', { metadata: { annotations: { 'nodeportlocal.antrea.io/enabled': 'true' } } });
    await eventually(async () => (await ports()).join() === '8080', 5000, 'annotated again');
    await c.core.deleteNamespacedService({ name: 'web', namespace: 'default' });
    await eventually(async () => (await c.annotationText('web-1')) === undefined, 5000, 'service deleted');
  });

  it('named targetPorts per Pod, TCP and UDP independent, hostPort published as is, shared mappings, several ports', async (t) => {
    const { c, kc } = await setup(t);
    await c.service('web', {
      ports: [
        { name: 'http', port: 80, targetPort: 'http' },
        { name: 'dns', port: 53, targetPort: 53, protocol: 'UDP' },
        { name: 'dnst', port: 53, targetPort: 53 },
      ],
    });
    await c.service('web-again', { selector: { app: 'web' }, ports: [{ port: 8000, targetPort: 'http' }] });
    await c.pod('a', {
      node: 'n1',
      ips: ['10.244.1.1'],
      ports: [
        { name: 'http', containerPort: 8080 },
        { containerPort: 53, protocol: 'UDP' },
        { containerPort: 53 },
      ],
    });
    await c.pod('b', {
      node: 'n1',
      ips: ['10.244.1.2'],
      ports: [{ name: 'http', containerPort: 9090, hostPort: 30090 }],
    });
    const ag = await startAgent(t, kc, { nodeName: 'n1' });
    await eventually(
      async () => (await c.entries('a')).length === 3 && (await c.entries('b')).length === 3,
      5000,
      'entries',
    );
    const a = await c.entries('a');
    assert.deepEqual(a.map((e) => `${e.podPort}/${e.protocol}`).sort(), ['53/tcp', '53/udp', '8080/tcp']);
    const b = await c.entries('b');
    const http = b.find((e) => e.podPort === 9090)!;
    assert.equal(http.nodePort, 30090, 'hostPort is published as the node port');
    assert.ok(!rules(ag.backend).some((r) => r.includes('10.244.1.2:9090')), 'no rule for a hostPort');
    // Numeric targetPorts map whatever the container declares; both Services on http share one mapping.
    assert.deepEqual(b.map((e) => `${e.podPort}/${e.protocol}`).sort(), ['53/tcp', '53/udp', '9090/tcp']);
    const nodePorts = a.map((e) => `${e.protocol}/${e.nodePort}`);
    assert.equal(new Set(nodePorts).size, 3, 'distinct ports per protocol');
  });

  it('dual-stack Pods get one element per family', async (t) => {
    const { c, kc } = await useSandbox(t).then(async (sb) => ({ ...sb, c: new Cluster(sb.kc) }));
    await c.node('ds', { internal: ['127.0.10.9', '::1'] });
    await c.service('web', { ports: [{ port: 80, targetPort: 8080 }] });
    await c.pod('web-1', { node: 'ds', ips: ['10.244.1.5', 'fd00::5'] });
    const a = await startAgent(t, kc, { nodeName: 'ds' });
    await eventually(async () => (await c.entries('web-1')).length === 2, 5000, 'two families');
    const e = await c.entries('web-1');
    assert.deepEqual(e.map((x) => `${x.ipFamily} ${x.nodeIP}`).sort(), ['IPv4 127.0.10.9', 'IPv6 ::1']);
    assert.ok(rules(a.backend).some((r) => r.includes('fd00::5:8080')));
  });
});

describe('NPL agent on the sandbox: lifecycle', () => {
  it('terminated, IP-less and deleted Pods lose their mappings; a new Pod IP keeps the port', async (t) => {
    const { c, kc } = await setup(t);
    await c.service('web', { ports: [{ port: 80, targetPort: 8080 }] });
    await c.pod('p', { node: 'n1', ips: ['10.244.1.5'] });
    const a = await startAgent(t, kc, { nodeName: 'n1' });
    await eventually(async () => (await c.annotationText('p')) !== undefined, 5000, 'annotated');
    const port = (await c.entries('p'))[0]!.nodePort;
    await c.setPodIPs('p', ['10.244.1.99']);
    await eventually(
      () => rules(a.backend).join() === `tcp/${port}->10.244.1.99:8080`,
      5000,
      'rule repointed',
    );
    assert.equal((await c.entries('p'))[0]!.nodePort, port, 'same node port');
    await c.setPodIPs('p', []);
    await eventually(async () => (await c.annotationText('p')) === undefined, 5000, 'lost its IP');
    await c.setPodIPs('p', ['10.244.1.7']);
    await eventually(async () => (await c.annotationText('p')) !== undefined, 5000, 'IP back');
    await c.setPodIPs('p', ['10.244.1.7'], 'default', 'Succeeded');
    await eventually(async () => (await c.annotationText('p')) === undefined, 5000, 'terminated');
    await c.setPodIPs('p', ['10.244.1.7']);
    await eventually(async () => (await c.annotationText('p')) !== undefined, 5000, 'running again');
    await c.core.deleteNamespacedPod({ name: 'p', namespace: 'default' });
    await eventually(
      () => rules(a.backend).length === 0 && a.agent.table.all().length === 0,
      5000,
      'released',
    );
  });

  it('a Node IP change rewrites nodeIP and keeps the port', async (t) => {
    const { c, kc } = await setup(t);
    await c.service('web', { ports: [{ port: 80, targetPort: 8080 }] });
    await c.pod('p', { node: 'n1', ips: ['10.244.1.5'] });
    const a = await startAgent(t, kc, { nodeName: 'n1' });
    await eventually(async () => (await c.annotationText('p')) !== undefined, 5000, 'annotated');
    const before = (await c.entries('p'))[0]!;
    await c.setNodeAddresses('n1', { internal: [N1], external: ['127.0.10.50'] });
    await eventually(
      async () => (await c.entries('p'))[0]?.nodeIP === '127.0.10.50',
      5000,
      'ExternalIP preferred',
    );
    assert.equal((await c.entries('p'))[0]!.nodePort, before.nodePort);
    assert.equal(rules(a.backend).length, 1);
  });

  it('an IP reused by another Pod does not confuse the two', async (t) => {
    const { c, kc } = await setup(t);
    await c.service('web', { ports: [{ port: 80, targetPort: 8080 }] });
    await c.pod('old', { node: 'n1', ips: ['10.244.1.5'] });
    const a = await startAgent(t, kc, { nodeName: 'n1' });
    await eventually(async () => (await c.annotationText('old')) !== undefined, 5000, 'old annotated');
    await c.setPodIPs('old', ['10.244.1.5'], 'default', 'Succeeded');
    await c.pod('new', { node: 'n1', ips: ['10.244.1.5'] });
    await eventually(
      async () =>
        (await c.annotationText('new')) !== undefined && (await c.annotationText('old')) === undefined,
      5000,
      'handover',
    );
    assert.equal(a.agent.table.all().length, 1);
    assert.deepEqual(
      a.agent.table.all().map((m) => m.podKey),
      ['default/new'],
    );
  });
});

describe('NPL agent on the sandbox: allocation', () => {
  it('next-fit skips ports in use on the host and never gives one port twice', async (t) => {
    const { c, kc } = await setup(t);
    const squatter = createServer();
    await new Promise<void>((r) => squatter.listen(61101, N1, () => r()));
    t.after(() => squatter.close());
    await c.service('web', { ports: [{ port: 80, targetPort: 8080 }] });
    for (let i = 0; i < 3; i++) await c.pod(`p${i}`, { node: 'n1', ips: [`10.244.1.${i + 1}`] });
    const a = await startAgent(t, kc, { nodeName: 'n1', range: { start: 61100, end: 61110 } });
    await a.agent.settled();
    await eventually(
      async () => (await Promise.all(['p0', 'p1', 'p2'].map((p) => c.annotationText(p)))).every(Boolean),
      5000,
      'all annotated',
    );
    const ports = (await Promise.all(['p0', 'p1', 'p2'].map((p) => c.entries(p))))
      .map((e) => e[0]!.nodePort)
      .sort();
    assert.equal(new Set(ports).size, 3);
    assert.ok(!ports.includes(61101), 'a port held by another program is skipped');
    assert.ok(ports.every((p) => p >= 61100 && p <= 61110));
  });

  it('on exhaustion: a Warning Event on the Pod, a metric, and a retry that succeeds once a port frees', async (t) => {
    const { c, kc } = await setup(t);
    await c.service('web', { ports: [{ port: 80, targetPort: 8080 }] });
    await c.pod('first', { node: 'n1', ips: ['10.244.1.1'] });
    const a = await startAgent(t, kc, { nodeName: 'n1', range: { start: 61200, end: 61200 } });
    await eventually(async () => (await c.annotationText('first')) !== undefined, 5000, 'first');
    await c.pod('second', { node: 'n1', ips: ['10.244.1.2'] });
    await eventually(
      async () => (await c.events('second')).some((e) => e.reason === 'NodePortLocalPortsExhausted'),
      5000,
      'event',
    );
    const ev = (await c.events('second')).find((e) => e.reason === 'NodePortLocalPortsExhausted')!;
    assert.equal(ev.type, 'Warning');
    assert.match(ev.message, /no free node port in 61200-61200/);
    const metrics = await a.metrics.registry.metrics();
    assert.match(metrics, /npl_lb_agent_port_exhaustion_total\{protocol="tcp",family="IPv4"\} [1-9]/);
    await c.core.deleteNamespacedPod({ name: 'first', namespace: 'default' });
    await eventually(
      async () => (await c.entries('second'))[0]?.nodePort === 61200,
      10_000,
      'retried into the freed port',
    );
  });

  it('writes the annotation only when the set changes (order-insensitive)', async (t) => {
    const { c, kc, sandbox } = await setup(t);
    await c.service('web', {
      ports: [
        { name: 'a', port: 80, targetPort: 8080 },
        { name: 'b', port: 81, targetPort: 8081 },
      ],
    });
    await c.pod('p', { node: 'n1', ips: ['10.244.1.5'] });
    const a = await startAgent(t, kc, { nodeName: 'n1' });
    await eventually(async () => (await c.entries('p')).length === 2, 5000, 'annotated');
    await a.agent.settled();
    // Reorder the elements by hand: same set, so the agent must not write again.
    const reversed = JSON.stringify(JSON.parse((await c.annotationText('p'))!).reverse());
    await c.patchPodStatus('p', { metadata: { annotations: { [NPL_POD_ANNOTATION]: reversed } } });
    const rv = sandbox.store.currentRV();
    await c.patchPod('p', { metadata: { labels: { app: 'web', touch: '1' } } });
    await a.agent.settled();
    await new Promise((r) => setTimeout(r, 200));
    await a.agent.settled();
    assert.equal(await c.annotationText('p'), reversed);
    assert.equal(sandbox.store.currentRV(), rv + 1, 'only the label patch wrote');
  });
});

describe('NPL agent on the sandbox: restart', () => {
  it('restores ports from annotations without writing; discards invalid, out-of-range and unbindable entries', async (t) => {
    const { c, kc } = await setup(t);
    await c.service('web', { ports: [{ port: 80, targetPort: 8080 }] });
    const ann = (nodePort: number) => ({
      [NPL_POD_ANNOTATION]: JSON.stringify([
        { podPort: 8080, nodeIP: N1, nodePort, protocol: 'tcp', ipFamily: 'IPv4' },
      ]),
    });
    await c.pod('keep', { node: 'n1', ips: ['10.244.1.1'], annotations: ann(61005) });
    await c.pod('old-form', {
      node: 'n1',
      ips: ['10.244.1.2'],
      annotations: {
        [NPL_POD_ANNOTATION]: JSON.stringify([
          { podPort: 8080, nodeIP: N1, nodePort: 61006, protocols: ['tcp'] },
        ]),
      },
    });
    await c.pod('outside', { node: 'n1', ips: ['10.244.1.3'], annotations: ann(60000) });
    await c.pod('busy', { node: 'n1', ips: ['10.244.1.4'], annotations: ann(61007) });
    await c.pod('garbage', {
      node: 'n1',
      ips: ['10.244.1.5'],
      annotations: { [NPL_POD_ANNOTATION]: '{not json' },
    });
    await c.pod('zz-dup', { node: 'n1', ips: ['10.244.1.6'], annotations: ann(61005) });
    const squatter = createServer();
    await new Promise<void>((r) => squatter.listen(61007, N1, () => r()));
    t.after(() => squatter.close());
    const a = await startAgent(t, kc, { nodeName: 'n1' });
    const report = a.agent.restoreReport;
    assert.equal(report.restored, 2);
    assert.deepEqual(report.discarded.map((d) => `${d.podKey} ${d.reason.split(':')[0]}`).sort(), [
      'default/busy taken or not bindable',
      'default/garbage invalid annotation',
      'default/outside out of range',
      'default/zz-dup taken or not bindable',
    ]);
    // The batch sync had the restored rules before any worker ran.
    assert.deepEqual((a.backend as MemoryBackend).calls.slice(0, 2), ['start', 'sync 2']);
    await eventually(
      async () => {
        const all = await Promise.all(
          ['keep', 'old-form', 'outside', 'busy', 'garbage', 'zz-dup'].map((p) =>
            c.entries(p).catch(() => []),
          ),
        );
        return all.every((e) => e.length === 1 && e[0]!.nodePort >= 61000 && e[0]!.nodePort <= 61999);
      },
      5000,
      'all valid',
    );
    assert.equal((await c.entries('keep'))[0]!.nodePort, 61005);
    assert.equal((await c.entries('old-form'))[0]!.nodePort, 61006);
    assert.notEqual((await c.entries('busy'))[0]!.nodePort, 61007);
    assert.ok((await c.events('garbage')).some((e) => e.reason === 'InvalidNodePortLocalAnnotation'));
  });

  it('keeps every port across an agent restart, and a range change moves them all, old rules gone', async (t) => {
    const { c, kc } = await setup(t);
    await c.service('web', { ports: [{ port: 80, targetPort: 8080 }] });
    for (let i = 0; i < 4; i++) await c.pod(`p${i}`, { node: 'n1', ips: [`10.244.1.${i + 1}`] });
    const backend = new MemoryBackend();
    const first = await startAgent(t, kc, { nodeName: 'n1', backend });
    const names = ['p0', 'p1', 'p2', 'p3'];
    const snapshot = async () => (await Promise.all(names.map((p) => c.annotationText(p)))).join('|');
    await eventually(
      async () => (await Promise.all(names.map((p) => c.annotationText(p)))).every(Boolean),
      5000,
      'all',
    );
    const before = await snapshot();
    await first.stop();
    const second = await startAgent(t, kc, { nodeName: 'n1', backend });
    await second.agent.settled();
    assert.equal(second.agent.restoreReport.restored, 4);
    assert.equal(await snapshot(), before, 'no churn across a restart');
    await second.stop();
    const third = await startAgent(t, kc, { nodeName: 'n1', backend, range: { start: 62500, end: 62600 } });
    await eventually(
      async () => {
        const e = await Promise.all(names.map((p) => c.entries(p)));
        return e.every((x) => x[0] !== undefined && x[0].nodePort >= 62500 && x[0].nodePort <= 62600);
      },
      5000,
      'moved into the new range',
    );
    assert.equal(third.agent.restoreReport.discarded.length, 4);
    assert.ok(
      [...backend.rules.values()].every((r) => r.nodePort >= 62500),
      'old rules gone',
    );
    assert.equal(backend.rules.size, 4);
  });

  it('a Pod without an IP and a malformed annotation are no crash; /metrics and readiness answer', async (t) => {
    const { c, kc } = await setup(t);
    await c.service('web', { ports: [{ port: 80, targetPort: 8080 }] });
    await c.pod('noip', { node: 'n1' });
    const a = await startAgent(t, kc, { nodeName: 'n1' });
    await a.agent.settled();
    assert.equal(await c.annotationText('noip'), undefined);
    assert.ok(a.agent.isReady);
    const text = await a.metrics.registry.metrics();
    for (const m of [
      'npl_lb_agent_ports_allocated',
      'npl_lb_agent_ports_free',
      'npl_lb_agent_rule_sync_duration_seconds',
      'npl_lb_agent_annotation_patch_errors_total',
    ]) {
      assert.ok(text.includes(m), m);
    }
    assert.match(text, /npl_lb_agent_ports_free\{protocol="tcp",family="IPv4"\} 1000/);
  });
});

describe('NPL agent on the sandbox: publish after the rules', () => {
  it('a Pod is annotated only once its rule is in, and a failed rule keeps it unannotated and retries', async (t) => {
    const { c, kc } = await setup(t);
    // A backend whose rule writes wait for the test (a slow iptables), then fail once.
    const inner = new MemoryBackend();
    let release: () => void = () => {};
    const gate = new Promise<void>((r) => (release = r));
    let failures = 1;
    const backend = Object.assign(Object.create(inner) as MemoryBackend, {
      add: async (m: Parameters<MemoryBackend['add']>[0]) => {
        await gate;
        if (failures-- > 0) throw new Error('iptables-restore: exit 4');
        return inner.add(m);
      },
    });
    await c.service('web', { ports: [{ port: 80, targetPort: 8080 }] });
    await startAgent(t, kc, { nodeName: 'n1', backend });
    await c.pod('web-1', { node: 'n1', ips: ['10.244.1.5'] });
    await new Promise((r) => setTimeout(r, 400));
    assert.equal(await c.annotationText('web-1'), undefined, 'no annotation while the rule is not in');
    release();
    await eventually(
      async () => (await c.annotationText('web-1')) !== undefined,
      10_000,
      'annotation after the retry',
    );
    const nodePort = JSON.parse((await c.annotationText('web-1'))!)[0].nodePort as number;
    assert.deepEqual(rules(inner), [`tcp/${nodePort}->10.244.1.5:8080`]);
  });
});
