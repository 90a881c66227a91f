import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { type ControllerConfig, parseControllerConfig } from '../../../src/config/controller-config.ts';
import {
  ingressClassSchema,
  ingressSchema,
  nodeSchema,
  podSchema,
  serviceSchema,
} from '../../../src/kube/objects.ts';
import { servicesToAnnotate } from '../../../src/source/annotated-services.ts';
import { DesiredCache } from '../../../src/controller/desired-cache.ts';
import { buildDesired, type ClusterView } from '../../../src/source/desired.ts';
import { SERVE_ALL } from '../../../src/source/gateway/from-view.ts';
import { allocateVips, deviceVips, inCidrs } from '../../../src/source/vips/vips.ts';
import { nplAnnotation } from '../../support/kube-objects.ts';

const cfg = (extra = ''): ControllerConfig =>
  parseControllerConfig(`clusterName: c1\nvip: {cidrs: [192.0.2.0/28]}\n${extra}`);
const npl = nplAnnotation;
const pod = (
  name: string,
  node: string,
  opts: {
    ready?: boolean;
    ann?: string;
    deleting?: boolean;
    labels?: Record<string, string>;
    ip?: string;
  } = {},
) =>
  podSchema.parse({
    metadata: {
      name,
      namespace: 'default',
      labels: opts.labels ?? { app: 'web' },
      annotations: opts.ann ? { 'nodeportlocal.antrea.io': opts.ann } : {},
      ...(opts.deleting ? { deletionTimestamp: '2026-01-01T00:00:00Z' } : {}),
    },
    spec: { nodeName: node, containers: [{ name: 'c', ports: [{ name: 'http', containerPort: 8080 }] }] },
    status: {
      phase: 'Running',
      podIP: opts.ip ?? '10.244.0.1',
      conditions: [{ type: 'Ready', status: opts.ready === false ? 'False' : 'True' }],
    },
  });
const svc = (name: string, spec: Record<string, unknown>, annotations: Record<string, string> = {}) =>
  serviceSchema.parse({
    metadata: { name, namespace: 'default', annotations },
    spec: { selector: { app: 'web' }, ...spec },
  });
const node = (name: string, ip: string, ready = true) =>
  nodeSchema.parse({
    metadata: { name },
    status: {
      addresses: [{ type: 'InternalIP', address: ip }],
      conditions: [{ type: 'Ready', status: ready ? 'True' : 'False' }],
    },
  });
/** The Nodes the NodePortLocal annotations of these tests point at. */
const nplNodes = [node('n1', '192.0.2.101'), node('n2', '192.0.2.102')];
const view = (v: Partial<ClusterView>): ClusterView => ({
  services: [],
  ingresses: [],
  ingressClasses: [],
  pods: [],
  nodes: nplNodes,
  ...v,
});
const lb = (ports = [{ name: 'http', port: 80, targetPort: 'http' }]) =>
  svc('web', { type: 'LoadBalancer', loadBalancerClass: 'npl-lb.io/lb', ports });

describe('desired state from the cluster', () => {
  it('NodePortLocal: one member per annotated Pod at nodeIP:nodePort, tagged with node and Pod; readiness and termination', () => {
    const r = buildDesired(
      view({
        services: [lb()],
        pods: [
          pod('a', 'n1', { ann: npl([[8080, '192.0.2.101', 61000]]) }),
          pod('b', 'n2', { ann: npl([[8080, '192.0.2.102', 61000]]), ready: false }),
          pod('c', 'n2', { ann: npl([[8080, '192.0.2.102', 61001]]), deleting: true }),
          pod('d', 'n3'),
          pod('other', 'n1', { labels: { app: 'db' }, ann: npl([[8080, '192.0.2.101', 61005]]) }),
        ],
      }),
      cfg(),
    );
    const p = r.state.pools[0]!;
    assert.equal(p.name, 'c1--default-web-http');
    assert.deepEqual(p.members.map((m) => `${m.address}:${m.port} ${m.node} ${m.pod} ${m.enabled}`).sort(), [
      '192.0.2.101:61000 n1 default/a true',
      '192.0.2.102:61000 n2 default/b false',
      '192.0.2.102:61001 n2 default/c false',
    ]);
    assert.deepEqual(r.waiting.get('default/web'), ['default/d']);
    const vs = r.state.virtualServices[0]!;
    assert.equal(vs.kind === 'l4' && vs.name, 'c1--default-web-TCP-80');
    assert.ok(vs.kind === 'l4' && inCidrs(vs.vip, ['192.0.2.0/28']));
  });

  it('NodePort mode: every Ready node; ClusterIP mode: Pod IPs', () => {
    const s = lb([{ name: 'http', port: 80, targetPort: 'http', nodePort: 30080 } as never]);
    const nodes = [node('n1', '10.0.0.1'), node('n2', '10.0.0.2', false)];
    const np = buildDesired(
      view({ services: [s], nodes, pods: [pod('a', 'n1')] }),
      cfg('serviceType: NodePort'),
    );
    assert.deepEqual(
      np.state.pools[0]!.members.map((m) => `${m.address}:${m.port}@${m.node}`),
      ['10.0.0.1:30080@n1'],
    );
    const cip = buildDesired(
      view({ services: [s], nodes, pods: [pod('a', 'n1', { ip: '10.244.1.9' })] }),
      cfg('serviceType: ClusterIP'),
    );
    assert.deepEqual(
      cip.state.pools[0]!.members.map((m) => `${m.address}:${m.port}`),
      ['10.244.1.9:8080'],
    );
  });

  it('only LoadBalancer Services of our class (or none, when we are the default)', () => {
    const other = svc('x', {
      type: 'LoadBalancer',
      loadBalancerClass: 'someone/else',
      ports: [{ port: 80 }],
    });
    const none = svc('y', { type: 'LoadBalancer', ports: [{ port: 80 }] });
    const cip = svc('z', { ports: [{ port: 80 }] });
    assert.equal(buildDesired(view({ services: [other, none, cip] }), cfg()).state.virtualServices.length, 0);
    assert.equal(
      buildDesired(view({ services: [none] }), cfg('defaultLoadBalancer: true')).state.virtualServices.length,
      1,
    );
  });

  it('L7: one shared virtual service per IngressClass, routes by host and path, backends by port name or number, default backend', () => {
    const classes = [
      ingressClassSchema.parse({
        metadata: { name: 'npl', annotations: { 'ingressclass.kubernetes.io/is-default-class': 'true' } },
        spec: { controller: 'npl-lb.io/ingress-controller' },
      }),
      ingressClassSchema.parse({ metadata: { name: 'nginx' }, spec: { controller: 'k8s.io/ingress-nginx' } }),
    ];
    const multi = svc('api', {
      ports: [
        { name: 'grpc', port: 9000 },
        { name: 'http', port: 8080 },
      ],
    });
    const ing = (name: string, spec: Record<string, unknown>) =>
      ingressSchema.parse({ metadata: { name, namespace: 'default' }, spec });
    const r = buildDesired(
      view({
        services: [multi],
        ingressClasses: classes,
        ingresses: [
          ing('a', {
            ingressClassName: 'npl',
            rules: [
              {
                host: 'a.example',
                http: {
                  paths: [
                    {
                      path: '/v1',
                      pathType: 'Prefix',
                      backend: { service: { name: 'api', port: { name: 'http' } } },
                    },
                  ],
                },
              },
            ],
          }),
          ing('b', { defaultBackend: { service: { name: 'api', port: { number: 9000 } } } }),
          ing('c', {
            ingressClassName: 'nginx',
            defaultBackend: { service: { name: 'api', port: { number: 9000 } } },
          }),
        ],
      }),
      cfg(),
    );
    const l7 = r.state.virtualServices.filter((v) => v.kind === 'l7');
    assert.equal(l7.length, 1);
    const vs = l7[0]!;
    assert.ok(vs.kind === 'l7');
    assert.equal(vs.name, 'c1--ingress-npl');
    assert.deepEqual(
      vs.routes.map((x) => `${x.host}${x.path} ${x.pathType} -> ${x.pool}`),
      ['a.example/v1 Prefix -> c1--default-api-http.l7'],
    );
    assert.equal(vs.defaultPool, 'c1--default-api-grpc.l7');
    assert.deepEqual(
      [...r.ingresses.keys()].sort(),
      ['default/a', 'default/b'],
      'the nginx Ingress is not ours',
    );
  });

  it('auto-annotation covers our LoadBalancer Services and our Ingresses’ backends, only in NodePortLocal mode', () => {
    const classes = [
      ingressClassSchema.parse({
        metadata: { name: 'npl' },
        spec: { controller: 'npl-lb.io/ingress-controller' },
      }),
    ];
    const ingresses = [
      ingressSchema.parse({
        metadata: { name: 'i', namespace: 'default' },
        spec: {
          ingressClassName: 'npl',
          defaultBackend: { service: { name: 'backend', port: { number: 80 } } },
        },
      }),
    ];
    const v = view({ services: [lb()], ingressClasses: classes, ingresses });
    assert.deepEqual([...servicesToAnnotate(v, cfg())].sort(), ['default/backend', 'default/web']);
    assert.deepEqual([...servicesToAnnotate(v, cfg('serviceType: NodePort'))], []);
    assert.deepEqual([...servicesToAnnotate(v, cfg('autoAnnotate: false'))], []);
  });

  it('idempotency: the same cluster gives the same desired state', () => {
    const v = view({
      services: [lb()],
      pods: [pod('a', 'n1', { ann: npl([[8080, '192.0.2.101', 61000]]) })],
    });
    assert.deepEqual(buildDesired(v, cfg()).state, buildDesired(v, cfg()).state);
  });

  it('a pass after Pod changes only equals a full build; a Service change takes the full path again', () => {
    const c = cfg();
    const other = svc('api', {
      type: 'LoadBalancer',
      loadBalancerClass: 'npl-lb.io/lb',
      selector: { app: 'api' },
      ports: [{ name: 'http', port: 80, targetPort: 'http' }],
    });
    const services = [lb(), other];
    // The cache hands out the same lists while a kind is unchanged; so does this test.
    const same = { ingresses: [], ingressClasses: [], nodes: nplNodes };
    const cache = new DesiredCache();
    const a1 = pod('a', 'n1', { ann: npl([[8080, '192.0.2.101', 61000]]) });
    const b1 = pod('b', 'n2', { ann: npl([[8080, '192.0.2.102', 61000]]), labels: { app: 'api' } });
    const first = cache.build(view({ ...same, services, pods: [a1, b1] }), c, SERVE_ALL);
    // Pod a moves to another node port; only default/web is named as changed.
    const a2 = pod('a', 'n1', { ann: npl([[8080, '192.0.2.101', 61009]]) });
    a2.metadata.resourceVersion = '2';
    const v2 = view({ ...same, services, pods: [a2, b1] });
    const fast = cache.build(v2, c, SERVE_ALL, new Set(['default/web']));
    assert.deepEqual(fast, buildDesired(v2, c));
    assert.equal(
      fast.state.virtualServices,
      first.state.virtualServices,
      'virtual services reused as they are',
    );
    const api = (r: typeof fast) => r.state.pools.find((p) => p.service === 'default/api');
    assert.equal(api(fast), api(first), 'the unchanged Service keeps its pool object');
    assert.deepEqual(
      fast.state.pools.find((p) => p.service === 'default/web')?.members.map((m) => m.port),
      [61009],
    );
    // A new Services list (a Service changed): its new port is there, as in a full build.
    const widened = svc('web', {
      type: 'LoadBalancer',
      loadBalancerClass: 'npl-lb.io/lb',
      ports: [
        { name: 'http', port: 80, targetPort: 'http' },
        { name: 'alt', port: 8080, targetPort: 'http' },
      ],
    });
    const v3 = view({ ...same, services: [widened, other], pods: [a2, b1] });
    const after = cache.build(v3, c, SERVE_ALL, new Set(['default/web']));
    assert.deepEqual(after, buildDesired(v3, c));
    assert.equal(after.state.virtualServices.length, 3);
  });
});

describe('VIP allocation', () => {
  it('with vip.cidrs empty a LoadBalancer Service is told so, not that no VIP is free', () => {
    const empty = parseControllerConfig('clusterName: c1\ndefaultLoadBalancer: true\n');
    const st = buildDesired(view({ services: [lb()] }), empty).services.get('default/web')!;
    assert.equal(st.vip, undefined);
    assert.equal(st.reason, 'NoVIP');
    assert.match(st.problem ?? '', /vip\.cidrs is empty; set vip\.cidrs/);
    const full = buildDesired(
      view({ services: [lb()] }),
      parseControllerConfig('clusterName: c1\ndefaultLoadBalancer: true\nvip: {cidrs: [192.0.2.1/32]}\n'),
    );
    assert.equal(full.services.get('default/web')!.vip, '192.0.2.1');
  });

  it('requested first, then what the status already shows, then hashed into the CIDRs; clashes reported', () => {
    const requests = [
      { key: 'service/a', requested: '192.0.2.5' },
      { key: 'service/b', requested: '192.0.2.5' },
      { key: 'service/c', published: '192.0.2.9' },
      { key: 'service/d' },
    ];
    const cidrs = ['192.0.2.0/29', '192.0.2.8/30'];
    const r = allocateVips(requests, cidrs);
    assert.deepEqual(r.get('service/a'), { vip: '192.0.2.5' });
    assert.ok('conflict' in r.get('service/b')!);
    assert.deepEqual(r.get('service/c'), { vip: '192.0.2.9' });
    const d = r.get('service/d')!;
    assert.ok('vip' in d && inCidrs(d.vip, cidrs) && d.vip !== '192.0.2.5' && d.vip !== '192.0.2.9');
    assert.deepEqual(allocateVips([...requests].reverse(), cidrs), r, 'deterministic, whatever the order');
    assert.deepEqual(allocateVips([{ key: 'x' }], []).get('x'), { exhausted: true });
  });

  it('where the device allocates: asked addresses stay static (clashes reported), the rest auto:<key>, whatever was published', () => {
    const r = deviceVips([
      { key: 'service/a', requested: '203.0.113.5' },
      { key: 'service/b', requested: '203.0.113.5' },
      { key: 'service/c', published: '192.0.2.9' },
      { key: 'gateway/ns/gw' },
      { key: 'service/d', requested: 'not-an-ip' },
    ]);
    assert.deepEqual(r.get('service/a'), { vip: '203.0.113.5' });
    assert.ok('conflict' in r.get('service/b')!);
    assert.deepEqual(r.get('service/c'), { vip: 'auto:service/c' });
    assert.deepEqual(r.get('gateway/ns/gw'), { vip: 'auto:gateway/ns/gw' });
    assert.ok('invalid' in r.get('service/d')!);
  });

  it('where the device allocates, a published VIP stays with its publisher: a Gateway asking for it is refused, whichever key sorts first, across restarts', () => {
    // The Service published a static VIP; the Gateway (its key sorts first) asks for the same one.
    const asked = deviceVips([
      { key: 'service/team-a/web', requested: '203.0.113.7', published: '203.0.113.7' },
      { key: 'gateway/team-b/gw', requested: '203.0.113.7' },
    ]);
    assert.deepEqual(asked.get('service/team-a/web'), { vip: '203.0.113.7' });
    assert.match(
      (asked.get('gateway/team-b/gw') as { conflict: string }).conflict,
      /already used by service\/team-a\/web/,
    );
    // The device allocated the Service's address (auto): asking for it is refused all the same.
    const auto = deviceVips([
      { key: 'service/team-a/web', published: '203.0.113.8' },
      { key: 'gateway/team-b/gw', requested: '203.0.113.8' },
      { key: 'gateway/team-b/other', requested: '203.0.113.9' },
    ]);
    assert.deepEqual(auto.get('service/team-a/web'), { vip: 'auto:service/team-a/web' });
    assert.ok('conflict' in auto.get('gateway/team-b/gw')!);
    assert.deepEqual(auto.get('gateway/team-b/other'), { vip: '203.0.113.9' });
    // Idempotent: the same inputs (a restart reads the same statuses) give the same owners.
    assert.deepEqual(
      deviceVips([
        { key: 'service/team-a/web', requested: '203.0.113.7', published: '203.0.113.7' },
        { key: 'gateway/team-b/gw', requested: '203.0.113.7' },
      ]),
      asked,
    );
  });

  it('where the device allocates, a Service’s virtual services share auto:<service> and nothing comes from vip.cidrs', () => {
    const d = buildDesired(
      view({
        services: [
          lb([
            { name: 'http', port: 80, targetPort: 'http' },
            { name: 'alt', port: 8080, targetPort: 'http' },
          ]),
        ],
      }),
      cfg('defaultLoadBalancer: true'),
      {
        name: 'avi',
        caps: {
          l4: { tcp: true, udp: true },
          l7: true,
          memberNodeTag: true,
          drainingMembers: true,
          allocatesVips: true,
        },
      },
    );
    assert.deepEqual(
      d.state.virtualServices.map((v) => v.vip),
      ['auto:service/default/web', 'auto:service/default/web'],
    );
    assert.equal(d.services.get('default/web')?.vip, 'auto:service/default/web');
  });
});

describe('controller config', () => {
  it('defaults, and one line naming the bad field', () => {
    const c = parseControllerConfig('clusterName: prod');
    assert.equal(c.serviceType, 'NodePortLocal');
    assert.equal(c.loadBalancerClass, 'npl-lb.io/lb');
    assert.throws(
      () => parseControllerConfig('serviceType: NodePortLocal'),
      /config: clusterName: is required/,
    );
    assert.throws(() => parseControllerConfig('clusterName: a\nserviceType: LB'), /config: serviceType: /);
    assert.throws(
      () => parseControllerConfig('clusterName: a\nvip: {cidrs: [300.1.1.1/24]}'),
      /config: vip.cidrs.0: must be an IPv4 or IPv6 CIDR/,
    );
    assert.throws(
      () => parseControllerConfig('clusterName: a\nbogus: 1'),
      /config: \(top level\): unknown field "bogus"/,
    );
    assert.throws(() => parseControllerConfig('clusterName: [unclosed'), /not valid YAML/);
  });
});
