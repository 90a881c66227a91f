/**
 * Per-class infrastructure (issue 33 item 3, a first part): LoadBalancerParameters named by a
 * GatewayClass (`spec.parametersRef`) place its Gateways' virtual services (Avi: the Service Engine
 * group); a Gateway's own `spec.infrastructure.parametersRef` goes over its class's. Two classes on
 * one controller land in two places. A reference that cannot be used is InvalidParameters with
 * why (another kind, not found, no namespace, a bad value, a setting the adapter does not apply):
 * the class not accepted and its Gateways programming nothing, never the parameters ignored.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { aviCapabilities } from '../../../adapters/avi/capabilities.ts';
import { F5_CAPABILITIES } from '../../../adapters/f5/capabilities.ts';
import { F5_PARAMETERS } from '../../../adapters/f5/parameters.ts';
import { AVI_PARAMETERS } from '../../../adapters/avi/parameters.ts';
import { HAPROXY_CAPABILITIES } from '../../../adapters/haproxy/capabilities.ts';
import { gatewayClassSchema, gatewaySchema } from '../../../src/kube/gateway-objects.ts';
import { loadBalancerParametersSchema } from '../../../src/kube/parameters-objects.ts';
import { backendPolicySchema } from '../../../src/kube/policy-objects.ts';
import { parseControllerConfig } from '../../../src/config/controller-config.ts';
import { ingressClassSchema } from '../../../src/kube/objects.ts';
import { buildDesired } from '../../../src/source/desired.ts';
import { SERVE_ALL } from '../../../src/source/gateway/from-view.ts';
import { resolveParameters } from '../../../src/source/gateway/parameters.ts';
import { parametersTable } from '../../../src/source/parameters-table.ts';
import { clusterView, kubeIngress, kubeService } from '../../support/kube-objects.ts';
import { CONTROLLER, INFRA, pass } from './gateway-support.ts';

const params = (namespace: string, name: string, spec: unknown) =>
  loadBalancerParametersSchema.parse({
    metadata: { namespace, name, resourceVersion: '1', uid: name },
    spec,
  });
const OBJECTS = [
  params('infra-ops', 'team-a', { avi: { serviceEngineGroup: 'se-team-a' } }),
  params('infra-ops', 'team-b', { avi: { serviceEngineGroup: 'se-team-b' }, f5: { partition: 'team_b' } }),
  params(INFRA, 'local', { avi: { serviceEngineGroup: 'se-gateway' } }),
  params('infra-ops', 'bad', { avi: { serviceEngineGroup: 'has space' } }),
];
const ref = (name: string, extra: Record<string, unknown> = {}) => ({
  group: 'npl-lb.io',
  kind: 'LoadBalancerParameters',
  name,
  namespace: 'infra-ops',
  ...extra,
});
const klass = (name: string, parametersRef?: Record<string, unknown>) =>
  gatewayClassSchema.parse({
    metadata: { name, generation: 1 },
    spec: { controllerName: CONTROLLER, ...(parametersRef ? { parametersRef } : {}) },
  });
const gateway = (name: string, cls: string, infra?: Record<string, unknown>) =>
  gatewaySchema.parse({
    metadata: { namespace: INFRA, name, generation: 1, creationTimestamp: '2026-01-01T00:00:00Z' },
    spec: {
      gatewayClassName: cls,
      listeners: [{ name: 'http', port: 80, protocol: 'HTTP' }],
      ...(infra ? { infrastructure: { parametersRef: infra } } : {}),
    },
  });
const avi = { name: 'avi', caps: aviCapabilities(false) };
const run = (classes: ReturnType<typeof klass>[], gateways: ReturnType<typeof gateway>[], lb = avi) =>
  pass({
    classes,
    gateways,
    parametersOf: (r, at) => resolveParameters(r, at, OBJECTS, lb),
  });
const placementOf = (r: ReturnType<typeof pass>, gw: string) =>
  r.virtualServices.filter((v) => v.name.includes(gw)).map((v) => v.placement?.serviceEngineGroup);
const classAccepted = (r: ReturnType<typeof pass>, name: string) => {
  const c = r.classes.get(name)!.conditions.find((x) => x.type === 'Accepted')!;
  return `${c.status}/${c.reason}: ${c.message}`;
};
const gatewayAccepted = (r: ReturnType<typeof pass>, name: string) => {
  const c = r.gateways.get(`${INFRA}/${name}`)!.conditions.find((x) => x.type === 'Accepted')!;
  return `${c.status}/${c.reason}: ${c.message}`;
};

describe('LoadBalancerParameters (per-class placement)', () => {
  it('two classes on one controller land in two SE groups; a Gateway without parameters stays where the adapter places it', () => {
    const r = run(
      [klass('a', ref('team-a')), klass('b', ref('team-b')), klass('plain')],
      [gateway('gw-a', 'a'), gateway('gw-b', 'b'), gateway('gw-plain', 'plain')],
    );
    assert.deepEqual(placementOf(r, 'gw-a'), ['se-team-a']);
    assert.deepEqual(placementOf(r, 'gw-b'), ['se-team-b']);
    assert.deepEqual(placementOf(r, 'gw-plain'), [undefined]);
    assert.match(classAccepted(r, 'a'), /^true\/Accepted/);
    // The f5 section of team-b serves another controller: said, not an error.
    assert.match(
      classAccepted(r, 'b'),
      /^true\/Accepted: .*f5 settings of infra-ops\/team-b are for another load balancer/,
    );
  });

  it("a Gateway's own parameters go over its class's", () => {
    const infra = { group: 'npl-lb.io', kind: 'LoadBalancerParameters', name: 'local' };
    const r = run([klass('a', ref('team-a'))], [gateway('gw-own', 'a', infra)]);
    assert.deepEqual(placementOf(r, 'gw-own'), ['se-gateway']);
    assert.match(gatewayAccepted(r, 'gw-own'), /^true\/Accepted/);
  });

  it('a reference that cannot be used is InvalidParameters with why; the class is not accepted and its Gateways program nothing', () => {
    for (const [r, why] of [
      [
        ref('team-a', { group: 'example.com', kind: 'Thing' }),
        /example\.com\/Thing team-a cannot be used: npl-lb reads npl-lb\.io\/LoadBalancerParameters/,
      ],
      [ref('nope'), /LoadBalancerParameters nope not found in namespace infra-ops/],
      [ref('team-a', { namespace: undefined }), /names no namespace/],
      [ref('bad'), /spec\.avi\.serviceEngineGroup: letters, digits/],
    ] as const) {
      const out = run([klass('x', r)], [gateway('gw-x', 'x')]);
      assert.match(
        classAccepted(out, 'x'),
        new RegExp(`^false/InvalidParameters: .*${why.source}`),
        JSON.stringify(r),
      );
      assert.match(gatewayAccepted(out, 'gw-x'), /^false\/InvalidParameters: its GatewayClass x: /);
      assert.deepEqual(placementOf(out, 'gw-x'), [], 'nothing programmed');
    }
    // A Gateway's own reference that cannot be used: that Gateway alone.
    const own = run(
      [klass('a', ref('team-a'))],
      [
        gateway('gw-bad', 'a', { group: 'npl-lb.io', kind: 'LoadBalancerParameters', name: 'nope' }),
        gateway('gw-ok', 'a'),
      ],
    );
    assert.match(
      gatewayAccepted(own, 'gw-bad'),
      /^false\/InvalidParameters: spec\.infrastructure\.parametersRef: .* not found in namespace gateway-conformance-infra/,
    );
    assert.deepEqual(placementOf(own, 'gw-ok'), ['se-team-a']);
  });

  it("per vendor: BIG-IP places by its section's partition and names the Avi one as another's; one that applies no partition refuses it; HAProxy reads none and says so", () => {
    const f5 = run([klass('b', ref('team-b'))], [gateway('gw-b', 'b')], {
      name: 'f5',
      caps: F5_CAPABILITIES,
    });
    assert.match(
      classAccepted(f5, 'b'),
      /^true\/Accepted: .*avi settings of infra-ops\/team-b are for another/,
    );
    assert.deepEqual(
      f5.virtualServices.filter((v) => v.name.includes('gw-b')).map((v) => v.placement),
      [{ partition: 'team_b' }],
    );
    const none = run([klass('b', ref('team-b'))], [gateway('gw-b', 'b')], {
      name: 'f5',
      caps: { ...F5_CAPABILITIES, parameters: { ...F5_PARAMETERS, applies: [] } },
    });
    assert.match(
      classAccepted(none, 'b'),
      /^false\/InvalidParameters: .*f5\.partition is not applied by the f5/,
    );
    const a = run([klass('a', ref('team-a'))], [gateway('gw-a', 'a')], { name: 'f5', caps: F5_CAPABILITIES });
    assert.match(
      classAccepted(a, 'a'),
      /^true\/Accepted: .*avi settings of infra-ops\/team-a are for another load balancer/,
    );
    assert.deepEqual(placementOf(a, 'gw-a'), [undefined]);
    const h = run([klass('a', ref('team-a'))], [gateway('gw-a', 'a')], {
      name: 'haproxy',
      caps: HAPROXY_CAPABILITIES,
    });
    assert.match(classAccepted(h, 'a'), /are for another load balancer/);
  });

  it('without a resolver (no parameters read), any reference is InvalidParameters, as upstream GatewayInvalidParametersRef expects', () => {
    const r = pass({
      classes: [klass('a')],
      gateways: [gateway('gw', 'a', { group: 'npl-lb.io', kind: 'LoadBalancerParameters', name: 'x' })],
    });
    assert.match(gatewayAccepted(r, 'gw'), /^false\/InvalidParameters/);
  });

  it("an IngressClass's spec.parameters place its virtual services; ones that cannot be used program none of them and say so on each Ingress", () => {
    const cfg = parseControllerConfig(
      'clusterName: c1\nvip: {cidrs: [192.0.2.0/28]}\ndefaultLoadBalancer: true',
    );
    const cls = (name: string, parameters?: Record<string, unknown>) =>
      ingressClassSchema.parse({
        metadata: { name },
        spec: { controller: 'npl-lb.io/ingress-controller', ...(parameters ? { parameters } : {}) },
      });
    const built = (parameters?: Record<string, unknown>) =>
      buildDesired(
        clusterView({
          services: [kubeService('web', { ports: [{ name: 'http', port: 80, targetPort: 8080 }] })],
          ingressClasses: [cls('team-a', parameters)],
          ingresses: [
            kubeIngress('shop', { className: 'team-a', host: 'shop.example', service: 'web', port: 80 }),
          ],
          loadBalancerParameters: OBJECTS,
        }),
        cfg,
        {
          ...SERVE_ALL,
          name: 'avi',
          caps: { ...SERVE_ALL.caps, parameters: { ...AVI_PARAMETERS, applies: ['serviceEngineGroup'] } },
        },
      );
    const ok = built({
      apiGroup: 'npl-lb.io',
      kind: 'LoadBalancerParameters',
      name: 'team-a',
      scope: 'Namespace',
      namespace: 'infra-ops',
    });
    assert.deepEqual(
      ok.state.virtualServices.map((v) => v.placement?.serviceEngineGroup),
      ['se-team-a'],
    );
    assert.deepEqual(
      built().state.virtualServices.map((v) => v.placement),
      [undefined],
      'no parameters: where the adapter places it',
    );
    // A Cluster-scoped reference (the default) to our namespaced kind, and one not found.
    for (const [ref, why] of [
      [{ apiGroup: 'npl-lb.io', kind: 'LoadBalancerParameters', name: 'team-a' }, /names no namespace/],
      [
        {
          apiGroup: 'npl-lb.io',
          kind: 'LoadBalancerParameters',
          name: 'nope',
          scope: 'Namespace',
          namespace: 'infra-ops',
        },
        /not found/,
      ],
    ] as const) {
      const r = built(ref);
      assert.deepEqual(r.state.virtualServices, [], `${JSON.stringify(ref)}: nothing programmed`);
      const f = r.findings.find((x) => x.reason === 'InvalidParameters');
      assert.equal(f?.key, 'default/shop');
      assert.match(f?.message ?? '', why);
      assert.match(
        f?.message ?? '',
        /^IngressClass team-a: spec\.parameters: .*; its virtual services are not programmed$/,
      );
    }
    // Another kind (an AviInfraSetting left from AKO): said on each Ingress, and set aside; the
    // class is served as before npl-lb read parameters.
    const aside = built({ apiGroup: 'ako.vmware.com', kind: 'AviInfraSetting', name: 'old' });
    assert.equal(aside.state.virtualServices.length, 1);
    assert.equal(aside.state.virtualServices[0]!.placement, undefined);
    assert.match(
      aside.findings.find((x) => x.reason === 'InvalidParameters')?.message ?? '',
      /ako\.vmware\.com\/AviInfraSetting old; npl-lb reads npl-lb\.io\/LoadBalancerParameters only: set aside/,
    );
  });

  it("a LoadBalancer Service's loadBalancerClass mapped in the configuration places its virtual services; an unmapped class is not ours; parameters that cannot be used program none and say so", () => {
    const cfg = (classes: string) =>
      parseControllerConfig(`clusterName: c1\nvip: {cidrs: [192.0.2.0/28]}\nloadBalancerClasses: ${classes}`);
    const lb = (name: string, cls: string) =>
      kubeService(name, {
        type: 'LoadBalancer',
        loadBalancerClass: cls,
        ports: [{ name: 'http', port: 80, targetPort: 8080 }],
      });
    const caps = {
      ...SERVE_ALL,
      name: 'avi',
      caps: {
        ...SERVE_ALL.caps,
        parameters: { ...AVI_PARAMETERS, applies: ['serviceEngineGroup'] },
      },
    };
    const built = (classes: string) =>
      buildDesired(
        clusterView({
          services: [
            lb('a', 'example.com/team-a'),
            lb('b', 'example.com/team-b'),
            lb('other', 'example.com/unmapped'),
            lb('plain', 'npl-lb.io/lb'),
          ],
          loadBalancerParameters: OBJECTS,
        }),
        cfg(classes),
        caps,
      );
    const r = built(
      '[{name: example.com/team-a, parameters: {namespace: infra-ops, name: team-a}}, {name: example.com/team-b, parameters: {namespace: infra-ops, name: team-b}}]',
    );
    assert.deepEqual(
      r.state.virtualServices.map((v) => [v.name, v.placement?.serviceEngineGroup]).sort(),
      [
        ['c1--default-a-TCP-80', 'se-team-a'],
        ['c1--default-b-TCP-80', 'se-team-b'],
        ['c1--default-plain-TCP-80', undefined],
      ],
      'two classes in two SE groups; loadBalancerClass itself where the adapter places it; an unmapped class not ours',
    );
    // Parameters not found, and ones the boundary refuses: that class's Services program nothing.
    const bad = built(
      '[{name: example.com/team-a, parameters: {namespace: infra-ops, name: nope}}, {name: example.com/team-b, parameters: {namespace: infra-ops, name: bad}}]',
    );
    assert.deepEqual(
      bad.state.virtualServices.map((v) => v.name),
      ['c1--default-plain-TCP-80'],
    );
    const a = bad.services.get('default/a')!;
    assert.equal(a.reason, 'InvalidParameters');
    assert.match(
      a.problem ?? '',
      /^loadBalancerClass example\.com\/team-a: .*nope not found in namespace infra-ops; its virtual services are not programmed$/,
    );
    assert.match(bad.services.get('default/b')!.problem ?? '', /serviceEngineGroup/);
    // The configuration refuses a class twice, and a name that is not domain/name.
    assert.throws(
      () =>
        cfg(
          '[{name: example.com/a, parameters: {namespace: x, name: y}}, {name: example.com/a, parameters: {namespace: x, name: z}}]',
        ),
      /each class once/,
    );
    assert.throws(() => cfg('[{name: "no slash", parameters: {namespace: x, name: y}}]'), /domain\/name/);
  });

  it("a class's VIP ranges (vip.cidrs inside the controller's): its Gateways, IngressClass and Services take addresses there; outside the controller's, or where the device allocates, InvalidParameters", () => {
    const objects = [
      ...OBJECTS,
      params('infra-ops', 'range', { vip: { cidrs: ['192.0.2.64/28'] } }),
      params('infra-ops', 'wide', { vip: { cidrs: ['198.51.100.0/24'] } }),
    ];
    const cfg = parseControllerConfig(
      'clusterName: c1\nvip: {cidrs: [192.0.2.0/24]}\nloadBalancerClasses: [{name: example.com/ranged, parameters: {namespace: infra-ops, name: range}}]',
    );
    const inRange = (ip: string | undefined) => !!ip && /^192\.0\.2\.(6[4-9]|7\d)$/.test(ip);
    const cls = ingressClassSchema.parse({
      metadata: { name: 'ranged' },
      spec: {
        controller: 'npl-lb.io/ingress-controller',
        parameters: {
          apiGroup: 'npl-lb.io',
          kind: 'LoadBalancerParameters',
          name: 'range',
          scope: 'Namespace',
          namespace: 'infra-ops',
        },
      },
    });
    const lbSvc = (name: string, extra: Record<string, unknown> = {}) =>
      kubeService(name, {
        type: 'LoadBalancer',
        loadBalancerClass: 'example.com/ranged',
        ports: [{ name: 'http', port: 80, targetPort: 8080 }],
        ...extra,
      });
    const r = buildDesired(
      clusterView({
        services: [
          lbSvc('a'),
          lbSvc('b'),
          lbSvc('asks', { loadBalancerIP: '192.0.2.5' }),
          kubeService('web', { ports: [{ name: 'http', port: 80, targetPort: 8080 }] }),
        ],
        ingressClasses: [cls],
        ingresses: [
          kubeIngress('shop', { className: 'ranged', host: 'shop.example', service: 'web', port: 80 }),
        ],
        loadBalancerParameters: objects,
        gatewayClasses: [klass('g', ref('range'))],
        gateways: [gateway('gw-r', 'g')],
      }),
      cfg,
      SERVE_ALL,
    );
    const vips = new Map(r.state.virtualServices.map((v) => [v.name, v.vip]));
    const gw = r.state.virtualServices.find((v) => v.name.includes('gw-r'));
    assert.ok(inRange(gw?.vip), `the Gateway's VIP in its class's range: ${gw?.vip}`);
    assert.ok(inRange(vips.get('c1--default-a-TCP-80')), vips.get('c1--default-a-TCP-80'));
    assert.ok(inRange(vips.get('c1--default-b-TCP-80')));
    assert.notEqual(vips.get('c1--default-a-TCP-80'), vips.get('c1--default-b-TCP-80'));
    assert.ok(inRange(vips.get('c1--ingress-ranged')), vips.get('c1--ingress-ranged'));
    const asks = r.services.get('default/asks')!;
    assert.equal(asks.reason, 'InvalidVIP');
    assert.match(asks.problem ?? '', /192\.0\.2\.5 is outside its class's vip\.cidrs \(192\.0\.2\.64\/28\)/);
    // Gateways: the class's range, through resolveParameters as the Gateway source calls it.
    const lb = { name: 'haproxy', caps: HAPROXY_CAPABILITIES };
    assert.deepEqual(
      resolveParameters(ref('range'), { field: 'spec.parametersRef', namespace: undefined }, objects, lb, [
        '192.0.2.0/24',
      ]),
      {
        placement: undefined,
        vipCidrs: ['192.0.2.64/28'],
      },
    );
    assert.match(
      JSON.stringify(
        resolveParameters(ref('wide'), { field: 'spec.parametersRef', namespace: undefined }, objects, lb, [
          '192.0.2.0/24',
        ]),
      ),
      /vip\.cidrs 198\.51\.100\.0\/24 is not inside the controller's vip\.cidrs \(192\.0\.2\.0\/24\)/,
    );
    assert.match(
      JSON.stringify(
        resolveParameters(
          ref('range'),
          { field: 'spec.parametersRef', namespace: undefined },
          objects,
          { name: 'avi', caps: { ...aviCapabilities(true) } },
          ['192.0.2.0/24'],
        ),
      ),
      /allocates VIPs from its IPAM/,
    );
  });

  it("HAProxy applies its section's frontend settings; another vendor names them as another's; a bad value is InvalidParameters", () => {
    const objects = [
      params('infra-ops', 'edge', {
        haproxy: { frontend: { maxConnections: 100, clientTimeoutSeconds: 30 } },
      }),
      params('infra-ops', 'zero', { haproxy: { frontend: { maxConnections: 0 } } }),
    ];
    const at = { field: 'spec.parametersRef', namespace: undefined };
    const h = { name: 'haproxy', caps: HAPROXY_CAPABILITIES };
    assert.deepEqual(resolveParameters(ref('edge'), at, objects, h), {
      placement: { frontend: { maxConnections: 100, clientTimeoutSeconds: 30 } },
    });
    assert.deepEqual(resolveParameters(ref('edge'), at, objects, avi), {
      placement: undefined,
      note: 'haproxy settings of infra-ops/edge are for another load balancer',
    });
    assert.match(
      JSON.stringify(resolveParameters(ref('zero'), at, objects, h)),
      /spec\.haproxy\.frontend\.maxConnections/,
    );
  });

  it("a class's pool defaults: the pools its virtual services use take them where no BackendPolicy says; a BackendPolicy wins; classes asking differently on one pool: none, said; a bad or unsupported default is InvalidParameters", () => {
    const objects = [
      params('infra-ops', 'lc', {
        defaults: { algorithm: 'LeastConnections', healthCheck: { type: 'HTTP', path: '/healthz' } },
      }),
      params('infra-ops', 'hash', { defaults: { algorithm: 'HeaderHash', hashKey: 'x-user' } }),
      params('infra-ops', 'badpath', { defaults: { healthCheck: { type: 'HTTP', path: 'no-slash' } } }),
    ];
    const cfg = parseControllerConfig('clusterName: c1\nvip: {cidrs: [192.0.2.0/28]}');
    const cls = (name: string, p: string) =>
      ingressClassSchema.parse({
        metadata: { name },
        spec: {
          controller: 'npl-lb.io/ingress-controller',
          parameters: {
            apiGroup: 'npl-lb.io',
            kind: 'LoadBalancerParameters',
            name: p,
            scope: 'Namespace',
            namespace: 'infra-ops',
          },
        },
      });
    const web = kubeService('web', { ports: [{ name: 'http', port: 80, targetPort: 8080 }] });
    const api = kubeService('api', { ports: [{ name: 'http', port: 80, targetPort: 8080 }] });
    const build = (
      classes: ReturnType<typeof cls>[],
      ingresses: ReturnType<typeof kubeIngress>[],
      extra = {},
    ) =>
      buildDesired(
        clusterView({
          services: [web, api],
          ingressClasses: classes,
          ingresses,
          loadBalancerParameters: objects,
          ...extra,
        }),
        cfg,
        {
          ...SERVE_ALL,
          caps: {
            ...SERVE_ALL.caps,
            algorithms: ['RoundRobin', 'LeastConnections', 'SourceHash', 'HeaderHash'],
          },
        },
      );
    const poolOf = (r: ReturnType<typeof build>, svc: string) =>
      r.state.pools.find((p) => p.service === `default/${svc}`);
    const one = build(
      [cls('a', 'lc')],
      [kubeIngress('i1', { className: 'a', host: 'a.example', service: 'web', port: 80 })],
    );
    assert.equal(poolOf(one, 'web')?.algorithm, 'LeastConnections');
    assert.equal(poolOf(one, 'web')?.check?.path, '/healthz');
    // A BackendPolicy on the Service wins over the class's defaults.
    const withPolicy = build(
      [cls('a', 'lc')],
      [kubeIngress('i1', { className: 'a', host: 'a.example', service: 'web', port: 80 })],
      {
        backendPolicies: [
          backendPolicySchema.parse({
            metadata: { namespace: 'default', name: 'p', creationTimestamp: '2026-01-01T00:00:00Z' },
            spec: { targetRefs: [{ group: '', kind: 'Service', name: 'web' }], algorithm: 'SourceHash' },
          }),
        ],
      },
    );
    assert.equal(poolOf(withPolicy, 'web')?.algorithm, 'SourceHash');
    assert.equal(poolOf(withPolicy, 'web')?.check, undefined);
    // Two classes asking different defaults share web's pool: none applied, said; api's pool (one
    // class only) takes its class's.
    const two = build(
      [cls('a', 'lc'), cls('b', 'hash')],
      [
        kubeIngress('i1', { className: 'a', host: 'a.example', service: 'web', port: 80 }),
        kubeIngress('i2', { className: 'b', host: 'b.example', service: 'web', port: 80 }),
        kubeIngress('i3', { className: 'b', host: 'c.example', service: 'api', port: 80 }),
      ],
    );
    assert.equal(poolOf(two, 'web')?.algorithm, undefined);
    assert.deepEqual([poolOf(two, 'api')?.algorithm, poolOf(two, 'api')?.hashKey], ['HeaderHash', 'x-user']);
    assert.match(
      two.findings.find((f) => f.key === 'default/web' && f.reason === 'PolicyNotApplied')?.message ?? '',
      /classes that route to it ask different pool defaults \(LoadBalancerParameters infra-ops\/lc, LoadBalancerParameters infra-ops\/hash\); none applied/,
    );
    // A default the boundary refuses, or the load balancer cannot do: InvalidParameters.
    const at = { field: 'spec.parametersRef', namespace: undefined };
    assert.match(
      JSON.stringify(
        resolveParameters(ref('badpath'), at, objects, { name: 'haproxy', caps: HAPROXY_CAPABILITIES }),
      ),
      /spec\.defaults\.healthCheck\.path/,
    );
    assert.match(
      JSON.stringify(resolveParameters(ref('hash'), at, objects, { name: 'f5', caps: F5_CAPABILITIES })),
      /defaults: the f5 load balancer cannot balance by HeaderHash/,
    );
  });

  it('a pass resolves each reference once (issue 50, item 5): the same answer, read from its table', () => {
    const cfg = parseControllerConfig('clusterName: c1\nvip: {cidrs: [192.0.2.0/24]}\n');
    const of = parametersTable(clusterView({ loadBalancerParameters: OBJECTS }), cfg, avi);
    const at = { field: 'spec.parametersRef', namespace: undefined };
    const first = of(ref('team-a'), at);
    assert.deepEqual(first, resolveParameters(ref('team-a'), at, OBJECTS, avi, cfg.vip.cidrs));
    assert.equal(of(ref('team-a'), at), first, 'read again, not resolved again');
    assert.equal(of({ ...ref('team-a') }, { ...at }), first, 'by what it names, not by object identity');
    // Another field or namespace it is named from is another question (its messages name the field).
    assert.notEqual(
      of(ref('team-a'), { field: 'spec.infrastructure.parametersRef', namespace: undefined }),
      first,
    );
    assert.notEqual(of(ref('team-b'), at), first);
    assert.deepEqual(of(undefined, at), { placement: undefined });
  });
});
