/**
 * An Ingress's client filter (npl-lb.io/source-ranges, issue 33 item 4 for L7 VIPs): its rules
 * carry the ranges in network form, both families; a value that is not a list of CIDRs refuses
 * that Ingress's rules alone (the class's other Ingresses served), said; a filtered Ingress never
 * supplies the class's default backend; a load balancer without route filters does not serve the
 * filtered rules (fail closed), said. HAProxy renders the filter as a 403 for the route's requests
 * from elsewhere, and its adapter refuses a range that is not a CIDR before it reaches a line; Avi
 * puts a rule answering 403 before the route's own; BIG-IP a rule marking the request for its 403
 * iRule, applied on the simulator and read back.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { renderHttpPolicy } from '../../../../adapters/avi/http-policy.ts';
import { F5Adapter } from '../../../../adapters/f5/adapter.ts';
import { F5_CAPABILITIES } from '../../../../adapters/f5/capabilities.ts';
import { BigIpSimulator } from '../../../../sim/f5/simulator.ts';
import { HAPROXY_CAPABILITIES } from '../../../../adapters/haproxy/capabilities.ts';
import { renderConfig } from '../../../../adapters/haproxy/config.ts';
import { changeProblem } from '../../../../adapters/haproxy/validate.ts';
import { parseControllerConfig } from '../../../../src/config/controller-config.ts';
import { ingressSchema } from '../../../../src/kube/objects.ts';
import type { L7VirtualService, Pool } from '../../../../src/model/types.ts';
import { applyCapabilities } from '../../../../src/source/capabilities.ts';
import { buildDesired } from '../../../../src/source/desired.ts';
import { SERVE_ALL } from '../../../../src/source/gateway/from-view.ts';
import { clusterView, ingressBody, kubeIngressClass, kubeService } from '../../../support/kube-objects.ts';

const cfg = parseControllerConfig('clusterName: c1\nvip: {cidrs: [192.0.2.0/28]}');
const ingress = (name: string, host: string, ranges?: string, defaultBackend = false) => {
  const body = ingressBody(name, { className: 'npl', host, service: 'web', port: 80 });
  return ingressSchema.parse({
    ...body,
    metadata: {
      ...body.metadata,
      annotations: ranges === undefined ? {} : { 'npl-lb.io/source-ranges': ranges },
    },
    spec: {
      ...body.spec,
      ...(defaultBackend ? { defaultBackend: { service: { name: 'web', port: { number: 80 } } } } : {}),
    },
  });
};
const build = (...ings: ReturnType<typeof ingress>[]) =>
  buildDesired(
    clusterView({
      services: [kubeService('web', { ports: [{ name: 'http', port: 80, targetPort: 8080 }] })],
      ingressClasses: [kubeIngressClass('npl')],
      ingresses: ings,
    }),
    cfg,
    SERVE_ALL,
  );
const routes = (r: ReturnType<typeof build>) =>
  (r.state.virtualServices[0] as L7VirtualService | undefined)?.routes.map((x) => [x.host, x.sourceRanges]) ??
  [];

describe('npl-lb.io/source-ranges on an Ingress', () => {
  it('its rules carry the ranges in network form, sorted; another Ingress of the class is unfiltered', () => {
    const r = build(
      ingress('a', 'a.example', ' 10.1.2.3/8, fd00::1/8,192.0.2.7/32'),
      ingress('b', 'b.example'),
    );
    assert.deepEqual(routes(r).sort(), [
      ['a.example', ['10.0.0.0/8', '192.0.2.7/32', 'fd00::/8']],
      ['b.example', undefined],
    ]);
  });

  it('a value that is not a list of CIDRs refuses that Ingress alone, said', () => {
    for (const bad of ['', ' , ', '10.0.0.0/8, nope', '10.0.0.0/33', '10.0.0.0/8 } or { always_true']) {
      const r = build(ingress('a', 'a.example', bad), ingress('b', 'b.example'));
      assert.deepEqual(routes(r), [['b.example', undefined]], JSON.stringify(bad));
      const f = r.findings.find((x) => x.reason === 'InvalidSourceRange');
      assert.equal(f?.key, 'default/a');
      assert.match(
        f?.message ?? '',
        /npl-lb\.io\/source-ranges: .*; its rules are not served until it is fixed/,
      );
    }
    const many = Array.from({ length: 65 }, (_, i) => `10.0.${i}.0/24`).join(',');
    assert.match(
      build(ingress('a', 'a.example', many)).findings.find((x) => x.reason === 'InvalidSourceRange')
        ?.message ?? '',
      /65 ranges, at most 64/,
    );
  });

  it("a filtered Ingress does not supply the class's default backend, said", () => {
    const r = build(ingress('a', 'a.example', '10.0.0.0/8', true));
    assert.equal((r.state.virtualServices[0] as L7VirtualService).defaultPool, undefined);
    assert.match(
      r.findings.find((x) => x.key === 'default/a' && /defaultBackend/.test(x.message))?.message ?? '',
      /spec\.defaultBackend is not served/,
    );
  });

  it('a load balancer without route filters does not serve the filtered rules, said; HAProxy keeps them', () => {
    const r = build(ingress('a', 'a.example', '10.0.0.0/8'), ingress('b', 'b.example'));
    const f5 = applyCapabilities(
      r,
      { ...F5_CAPABILITIES, http: { ...F5_CAPABILITIES.http!, sourceRanges: false } },
      'f5',
    );
    assert.deepEqual(routes(f5), [['b.example', undefined]]);
    assert.match(
      f5.findings.find((x) => x.reason === 'UnsupportedByLoadBalancer')?.message ?? '',
      /client address filters on HTTP routes/,
    );
    assert.equal(routes(applyCapabilities(r, HAPROXY_CAPABILITIES, 'haproxy')).length, 2);
  });

  it('HAProxy: a 403 for the route from elsewhere; none left: 403 to all; a range that is not a CIDR refused by the adapter', () => {
    const vs = (sourceRanges: string[]): L7VirtualService => ({
      kind: 'l7',
      name: 'c1--ingress-npl',
      vip: '192.0.2.5',
      port: 80,
      ingressClass: 'npl',
      defaultPool: undefined,
      routes: [
        { host: 'a.example', path: '/', pathType: 'Prefix', pool: 'web', source: 'default/a', sourceRanges },
      ],
    });
    const text = (v: L7VirtualService) => renderConfig([], [v], [], { adminSocket: '/tmp/x.sock' } as never);
    assert.match(
      text(vs(['10.0.0.0/8', 'fd00::/8'])),
      /acl r0_src src 10\.0\.0\.0\/8 fd00::\/8\n[^]*http-request return status 403 if is_r0 !r0_src\n/,
    );
    assert.match(text(vs([])), /http-request return status 403 if is_r0\n/);
    // An Ingress rule that redirects (npl-lb.io/ssl-redirect) takes the same route rules: a
    // redirect line, never a use_backend without a backend.
    const redirect: L7VirtualService = {
      ...vs([]),
      routes: [
        {
          host: 'a.example',
          path: '/',
          pathType: 'Prefix',
          pool: '',
          source: 'default/a',
          redirect: { scheme: 'https', statusCode: 301 },
        },
      ],
    };
    assert.match(text(redirect), /http-request redirect location .* code 301 if is_r0/);
    assert.doesNotMatch(text(redirect), /use_backend\s+if/);
    const hostile = vs(['10.0.0.0/8 } or { always_true']);
    const refused = changeProblem(
      { op: 'create', kind: 'virtualService', name: hostile.name, desired: hostile },
      false,
    );
    assert.equal(refused?.code, 'Invalid');
    assert.match(refused?.message ?? '', /is not a CIDR/);
  });

  it('Avi: before the route, the same matches with client_ip IS_NOT_IN the ranges answer a local 403', () => {
    const r = (sourceRanges: string[]) =>
      renderHttpPolicy({
        kind: 'l7',
        name: 'c1--ingress-npl',
        vip: '192.0.2.5',
        port: 80,
        ingressClass: 'npl',
        defaultPool: undefined,
        routes: [
          { host: 'a.example', path: '/', pathType: 'Exact', pool: 'web', source: 'default/a', sourceRanges },
        ],
      }).request as {
        name: string;
        match: Record<string, unknown>;
        switching_action?: { status_code?: string };
      }[];
    const rules = r(['10.0.0.0/8', 'fd00::/8']);
    assert.deepEqual(
      rules.map((x) => x.name),
      ['0.src', '0', '0.fence', 'none'],
    );
    assert.deepEqual(rules[0]!.match.client_ip, {
      match_criteria: 'IS_NOT_IN',
      prefixes: [
        { ip_addr: { addr: '10.0.0.0', type: 'V4' }, mask: 8 },
        { ip_addr: { addr: 'fd00::', type: 'V6' }, mask: 8 },
      ],
    });
    assert.equal(rules[0]!.switching_action?.status_code, 'HTTP_LOCAL_RESPONSE_STATUS_CODE_403');
    assert.deepEqual(rules[0]!.match.path, rules[1]!.match.path, "the route's own matches");
    const none = r([]);
    assert.equal(none[0]!.match.client_ip, undefined, 'no range: every client answered 403');
    assert.equal(none[0]!.switching_action?.status_code, 'HTTP_LOCAL_RESPONSE_STATUS_CODE_403');
  });

  it('BIG-IP: a rule before the route marks requests from outside the ranges, the 403 iRule answers; on the simulator, applied and read back', async (t) => {
    const sim = new BigIpSimulator();
    const url = await sim.start();
    t.after(() => sim.close());
    const a = new F5Adapter({ owner: 'c1', url, username: 'admin', password: 'admin', taskPollMs: 10 });
    t.after(() => a.close());
    await a.observe();
    const pool: Pool = {
      name: 'web',
      protocol: 'TCP',
      health: 'http',
      members: [{ address: '192.0.2.1', port: 61000, node: 'n1', pod: 'default/w', enabled: true }],
      service: 'default/web',
      servicePort: 'http',
    };
    const vs: L7VirtualService = {
      kind: 'l7',
      name: 'c1--ingress-npl',
      vip: '192.0.2.5',
      port: 80,
      ingressClass: 'npl',
      defaultPool: undefined,
      routes: [
        {
          host: 'a.example',
          path: '/',
          pathType: 'Exact',
          pool: 'web',
          source: 'default/a',
          sourceRanges: ['10.0.0.0/8', 'fd00::/8'],
        },
        { host: 'b.example', path: '/', pathType: 'Exact', pool: 'web', source: 'default/b' },
      ],
    };
    const results = await a.apply([
      { op: 'create', kind: 'pool', name: pool.name, desired: pool },
      { op: 'create', kind: 'virtualService', name: vs.name, desired: vs },
    ]);
    assert.deepEqual(
      results.map((x) => x.ok),
      [true, true],
      JSON.stringify(results.map((x) => x.error)),
    );
    const app = Object.values(sim.tenants.get('npl_lb_c1') ?? {}).find(
      (x) => (x as Record<string, unknown> | null)?.[vs.name] !== undefined,
    ) as Record<string, Record<string, unknown>>;
    assert.deepEqual(app[vs.name]!.iRules, ['c1--ingress-npl_403']);
    const rules = app[`${vs.name}_policy`]!.rules as {
      name: string;
      conditions: Record<string, unknown>[];
    }[];
    const src = rules.find((x) => x.name.endsWith('_src'))!;
    assert.deepEqual(src.conditions.at(-1), {
      type: 'tcp',
      event: 'request',
      address: { operand: 'does-not-match', values: ['10.0.0.0/8', 'fd00::/8'] },
    });
    assert.equal(rules.filter((x) => x.name.endsWith('_src')).length, 1, 'the unfiltered route has none');
    assert.match(String(app['c1--ingress-npl_403']!.iRule), /HTTP::respond 403/);
    const back = await a.observe();
    assert.deepEqual(
      (back.owned.virtualServices[0] as L7VirtualService).routes.map((x) => x.sourceRanges),
      [['10.0.0.0/8', 'fd00::/8'], undefined],
    );
  });
});
