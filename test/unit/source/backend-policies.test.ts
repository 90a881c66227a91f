/**
 * BackendPolicies: what each Service port's pools get, and each policy's status per target. The
 * table covers the GEP-713 rules (a port over the whole Service, the oldest of two on one target),
 * a target that does not exist, a spec that fails the validation boundary, and what the load
 * balancer cannot do; then the policy reaches the pools of a whole build, and only where it can.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Capabilities } from '../../../src/adapter/contract.ts';
import { parseControllerConfig } from '../../../src/config/controller-config.ts';
import { backendPolicySchema } from '../../../src/kube/policy-objects.ts';
import { resolveBackendPolicies } from '../../../src/source/backend-policies.ts';
import { buildDesired } from '../../../src/source/desired.ts';
import { SERVE_ALL } from '../../../src/source/gateway/from-view.ts';
import {
  clusterView,
  kubeIngress,
  kubeIngressClass,
  kubeNode,
  kubePod,
  kubeService,
  nplAnnotation,
} from '../../support/kube-objects.ts';

const policy = (
  name: string,
  spec: Record<string, unknown>,
  created = '2026-01-01T00:00:00Z',
  ns = 'default',
) =>
  backendPolicySchema.parse({
    metadata: { name, namespace: ns, creationTimestamp: created, generation: 2 },
    spec,
  });
const target = (name: string, sectionName?: string) => ({
  group: '',
  kind: 'Service',
  name,
  ...(sectionName ? { sectionName } : {}),
});
const ports = [
  { name: 'http', port: 80, targetPort: 8080 },
  { name: 'admin', port: 9090, targetPort: 9090 },
];
const web = kubeService('web', { type: 'LoadBalancer', ports });
const all: Capabilities = {
  ...SERVE_ALL.caps,
  algorithms: ['RoundRobin', 'LeastConnections', 'SourceHash'],
  persistence: ['Cookie', 'SourceIP'],
};
const accepted = (r: ReturnType<typeof resolveBackendPolicies>, p: string) =>
  (r.statuses.get(`default/${p}`) ?? []).map((a) => {
    const c = a.conditions[0]!;
    return `${a.ancestorRef.name}${a.ancestorRef.sectionName ? `#${a.ancestorRef.sectionName}` : ''} ${c.status ? 'True' : 'False'} ${c.reason}`;
  });

describe('BackendPolicy resolution', () => {
  it('applies to every port of its Service; one on a port wins there, with no conflict', () => {
    const r = resolveBackendPolicies(
      [
        policy('whole', { targetRefs: [target('web')], algorithm: 'LeastConnections' }),
        policy('admin', { targetRefs: [target('web', 'admin')], sessionPersistence: { type: 'SourceIP' } }),
      ],
      [web],
      all,
      'memory',
    );
    assert.deepEqual(r.forPort('default/web', 'http'), {
      algorithm: 'LeastConnections',
      policy: 'default/whole',
    });
    assert.deepEqual(r.forPort('default/web', 'admin'), { persistence: 'SourceIP', policy: 'default/admin' });
    assert.equal(r.forPort('default/other', 'http'), undefined);
    assert.deepEqual(accepted(r, 'whole'), ['web True Accepted']);
    assert.deepEqual(accepted(r, 'admin'), ['web#admin True Accepted']);
  });

  it('two policies on one target: the oldest wins, by creation time then name, whatever the order listed', () => {
    const older = policy(
      'zeta',
      { targetRefs: [target('web')], algorithm: 'SourceHash' },
      '2026-01-01T00:00:00Z',
    );
    const newer = policy(
      'alpha',
      { targetRefs: [target('web')], algorithm: 'LeastConnections' },
      '2026-02-01T00:00:00Z',
    );
    const tie = policy('beta', { targetRefs: [target('web')] }, '2026-01-01T00:00:00Z');
    for (const order of [
      [older, newer, tie],
      [tie, newer, older],
    ]) {
      const r = resolveBackendPolicies(order, [web], all, 'memory');
      // beta and zeta are as old: beta's name sorts first, so beta wins and has no algorithm.
      assert.deepEqual(r.forPort('default/web', 'http'), { policy: 'default/beta' });
      assert.deepEqual(accepted(r, 'beta'), ['web True Accepted']);
      assert.deepEqual(accepted(r, 'zeta'), ['web False Conflicted']);
      assert.deepEqual(accepted(r, 'alpha'), ['web False Conflicted']);
      assert.match(r.statuses.get('default/alpha')![0]!.conditions[0]!.message, /beta \(older\)/);
    }
  });

  it('a target that does not exist: a missing Service, a port it does not have, a Service of another namespace', () => {
    const r = resolveBackendPolicies(
      [
        policy('p', {
          targetRefs: [target('nope'), target('web', 'grpc'), target('web')],
          algorithm: 'LeastConnections',
        }),
        policy('elsewhere', { targetRefs: [target('web')] }, undefined, 'team-b'),
      ],
      [web],
      all,
      'memory',
    );
    assert.deepEqual(accepted(r, 'p'), [
      'nope False TargetNotFound',
      'web#grpc False TargetNotFound',
      'web True Accepted',
    ]);
    assert.deepEqual(
      r.statuses
        .get('team-b/elsewhere')!
        .map((a) => `${a.ancestorRef.namespace}/${a.ancestorRef.name} ${a.conditions[0]!.reason}`),
      ['team-b/web TargetNotFound'],
    );
    assert.deepEqual(r.forPort('default/web', 'http'), {
      algorithm: 'LeastConnections',
      policy: 'default/p',
    });
  });

  it('a spec failing the validation boundary applies nowhere and says which field, on each target it names', () => {
    const bad: [string, Record<string, unknown>, RegExp][] = [
      ['algo', { targetRefs: [target('web')], algorithm: 'Random' }, /spec\.algorithm/],
      ['kind', { targetRefs: [{ group: 'apps', kind: 'Deployment', name: 'web' }] }, /spec\.targetRefs\.0/],
      [
        'persist',
        { targetRefs: [target('web')], sessionPersistence: { type: 'Header' } },
        /sessionPersistence/,
      ],
      ['extra', { targetRefs: [target('web')], timeouts: { request: '1s' } }, /spec/],
      ['port', { targetRefs: [target('web', 'Not A Label')] }, /sectionName/],
    ];
    for (const [name, spec, field] of bad) {
      const r = resolveBackendPolicies([policy(name, spec)], [web], all, 'memory');
      const st = r.statuses.get(`default/${name}`)!;
      assert.equal(st.length, 1, name);
      assert.equal(st[0]!.conditions[0]!.reason, 'Invalid', name);
      assert.match(st[0]!.conditions[0]!.message, field, name);
      assert.equal(r.forPort('default/web', 'http'), undefined, name);
    }
  });

  it('what the load balancer cannot do is refused whole, naming it; a newer policy it can do then wins', () => {
    const f5ish: Capabilities = { ...SERVE_ALL.caps, algorithms: ['RoundRobin', 'LeastConnections'] };
    const r = resolveBackendPolicies(
      [
        policy('hash', { targetRefs: [target('web')], algorithm: 'SourceHash' }, '2026-01-01T00:00:00Z'),
        policy('sticky', { targetRefs: [target('web', 'http')], sessionPersistence: { type: 'Cookie' } }),
        policy('lc', { targetRefs: [target('web')], algorithm: 'LeastConnections' }, '2026-03-01T00:00:00Z'),
      ],
      [web],
      f5ish,
      'f5',
    );
    assert.deepEqual(accepted(r, 'hash'), ['web False Invalid']);
    assert.match(
      r.statuses.get('default/hash')![0]!.conditions[0]!.message,
      /the f5 load balancer cannot balance by SourceHash/,
    );
    assert.match(
      r.statuses.get('default/sticky')![0]!.conditions[0]!.message,
      /cannot keep sessions by Cookie/,
    );
    assert.deepEqual(accepted(r, 'lc'), ['web True Accepted']);
    assert.deepEqual(r.forPort('default/web', 'http'), {
      algorithm: 'LeastConnections',
      policy: 'default/lc',
    });
    // A load balancer that declares no algorithms balances round robin only.
    const { algorithms: _a, persistence: _p, ...bare } = all;
    const none = resolveBackendPolicies(
      [policy('lc', { targetRefs: [target('web')], algorithm: 'LeastConnections' })],
      [web],
      bare,
      'x',
    );
    assert.deepEqual(accepted(none, 'lc'), ['web False Invalid']);
  });

  it('reaches the pools of a build: L4 and HTTP pools of the Service; Cookie on the HTTP pool only, a Warning for the L4 one; round robin left unwritten', () => {
    const cfg = parseControllerConfig(
      'clusterName: c1\nvip: {cidrs: [192.0.2.0/28]}\ndefaultLoadBalancer: true',
    );
    const view = clusterView({
      services: [
        kubeService('web', { type: 'LoadBalancer', ports: [{ name: 'http', port: 80, targetPort: 8080 }] }),
      ],
      ingressClasses: [kubeIngressClass('npl')],
      ingresses: [kubeIngress('ing', { className: 'npl', host: 'a.example', service: 'web', port: 'http' })],
      nodes: [kubeNode('n1', '192.0.2.101')],
      pods: [kubePod('a', { node: 'n1', npl: nplAnnotation([[8080, '192.0.2.101', 61000]]) })],
      backendPolicies: [
        policy('sticky', {
          targetRefs: [target('web')],
          algorithm: 'LeastConnections',
          sessionPersistence: { type: 'Cookie' },
        }),
      ],
    });
    const r = buildDesired(view, cfg, { ...SERVE_ALL, caps: all });
    const byHealth = new Map(r.state.pools.map((p) => [p.health, p]));
    assert.equal(byHealth.get('http')!.algorithm, 'LeastConnections');
    assert.equal(byHealth.get('http')!.persistence, 'Cookie');
    assert.equal(byHealth.get('tcp')!.algorithm, 'LeastConnections');
    assert.equal(byHealth.get('tcp')!.persistence, undefined);
    const warned = r.findings.filter((f) => f.reason === 'PolicyNotApplied');
    assert.equal(warned.length, 1);
    assert.match(warned[0]!.message, /Cookie persistence/);
    assert.deepEqual([...r.policies!.keys()], ['default/sticky']);
    // RoundRobin asked explicitly is the default: the pools carry no algorithm (reads back equal).
    const rr = buildDesired(
      { ...view, backendPolicies: [policy('rr', { targetRefs: [target('web')], algorithm: 'RoundRobin' })] },
      cfg,
      { ...SERVE_ALL, caps: all },
    );
    assert.ok(rr.state.pools.every((p) => p.algorithm === undefined && p.persistence === undefined));
  });

  it('a health check of its own wins over the probes: an HTTP path, or a TCP connect; bad values and a load balancer without HTTP checks are refused', () => {
    const cfg = parseControllerConfig(
      'clusterName: c1\nvip: {cidrs: [192.0.2.0/28]}\ndefaultLoadBalancer: true',
    );
    const probed = kubePod('a', { node: 'n1', npl: nplAnnotation([[8080, '192.0.2.101', 61000]]) });
    // The Pod probes /ready on the target port.
    probed.spec.containers[0]!.readinessProbe = {
      httpGet: { path: '/ready', port: 8080, scheme: 'HTTP', httpHeaders: [] },
      periodSeconds: 5,
      timeoutSeconds: 1,
      successThreshold: 1,
      failureThreshold: 3,
    } as never;
    const view = (spec?: Record<string, unknown>) =>
      clusterView({
        services: [
          kubeService('web', { type: 'LoadBalancer', ports: [{ name: 'http', port: 80, targetPort: 8080 }] }),
        ],
        nodes: [kubeNode('n1', '192.0.2.101')],
        pods: [probed],
        backendPolicies: spec ? [policy('hc', { targetRefs: [target('web')], ...spec })] : [],
      });
    const checkOf = (spec?: Record<string, unknown>, caps: Capabilities = all) =>
      buildDesired(view(spec), cfg, { ...SERVE_ALL, caps }).state.pools[0]!.check;
    assert.equal(checkOf()?.path, '/ready', 'the probe without a policy');
    assert.deepEqual(
      checkOf({ healthCheck: { type: 'HTTP', path: '/healthz', intervalSeconds: 3, unhealthyThreshold: 2 } }),
      {
        type: 'http',
        path: '/healthz',
        intervalSeconds: 3,
        timeoutSeconds: 1,
        rise: 1,
        fall: 2,
      },
    );
    assert.equal(checkOf({ healthCheck: { type: 'TCP' } }), undefined, 'a TCP connect check');
    const status = (spec: Record<string, unknown>, caps: Capabilities = all) => {
      const r = buildDesired(view(spec), cfg, { ...SERVE_ALL, caps });
      const c = r.policies!.get('default/hc')![0]!.conditions[0]!;
      return { check: r.state.pools[0]!.check?.path, why: `${c.reason}: ${c.message}` };
    };
    for (const [hc, why] of [
      [{ type: 'HTTP' }, /Invalid: spec\.healthCheck\.path: an HTTP check needs a path/],
      [{ type: 'TCP', path: '/x' }, /Invalid: spec\.healthCheck\.path/],
      [
        { type: 'HTTP', path: '/x', intervalSeconds: 2, timeoutSeconds: 5 },
        /Invalid: spec\.healthCheck\.timeoutSeconds/,
      ],
      [{ type: 'HTTP', path: '/a b' }, /Invalid: spec\.healthCheck\.path: /],
      [{ type: 'HTTP', path: '/x', intervalSeconds: 0 }, /Invalid: spec\.healthCheck\.intervalSeconds/],
    ] as const) {
      const st = status({ healthCheck: hc });
      assert.match(st.why, why, JSON.stringify(hc));
      assert.equal(st.check, '/ready', `${JSON.stringify(hc)}: the probe's check stays`);
    }
    const noHttp = status({ healthCheck: { type: 'HTTP', path: '/healthz' } }, { ...all, httpChecks: false });
    assert.match(noHttp.why, /Invalid: the memory load balancer does not run HTTP checks/);
    // Headers of its own (a Host): sent where the load balancer can, checked as a probe's are.
    const host = [{ name: 'Host', value: 'api.example.com' }];
    assert.deepEqual(
      checkOf(
        { healthCheck: { type: 'HTTP', path: '/healthz', headers: host } },
        { ...all, checkHeaders: true },
      )?.headers,
      host,
    );
    assert.match(
      status(
        { healthCheck: { type: 'HTTP', path: '/healthz', headers: host } },
        { ...all, checkHeaders: false },
      ).why,
      /Invalid: the memory load balancer's checks send no headers yet/,
    );
    assert.match(
      status({ healthCheck: { type: 'HTTP', path: '/healthz', headers: [{ name: 'X-A', value: 'a\r\nb' }] } })
        .why,
      /Invalid: spec\.healthCheck\.headers: the value of X-A/,
    );
  });

  it('a check by HEAD and the statuses meaning up, where the load balancer can say them: ranges merged, the default said aloud changes nothing; bad values and what a load balancer cannot say refused by name', () => {
    const cfg = parseControllerConfig(
      'clusterName: c1\nvip: {cidrs: [192.0.2.0/28]}\ndefaultLoadBalancer: true',
    );
    const view = (hc: Record<string, unknown>) =>
      clusterView({
        services: [
          kubeService('web', { type: 'LoadBalancer', ports: [{ name: 'http', port: 80, targetPort: 8080 }] }),
        ],
        nodes: [kubeNode('n1', '192.0.2.101')],
        pods: [kubePod('a', { node: 'n1', npl: nplAnnotation([[8080, '192.0.2.101', 61000]]) })],
        backendPolicies: [
          policy('hc', {
            targetRefs: [target('web')],
            healthCheck: { type: 'HTTP', path: '/healthz', ...hc },
          }),
        ],
      });
    const any: Capabilities = { ...all, checkMethods: true, checkStatuses: 'any' };
    const run = (hc: Record<string, unknown>, caps: Capabilities = any) => {
      const r = buildDesired(view(hc), cfg, { ...SERVE_ALL, caps });
      const c = r.policies!.get('default/hc')![0]!.conditions[0]!;
      return { check: r.state.pools[0]!.check, why: `${c.reason}: ${c.message}` };
    };
    const ok = run({
      method: 'HEAD',
      expectedStatuses: [{ from: 204 }, { from: 200, to: 203 }, { from: 301, to: 302 }],
    });
    assert.equal(ok.check?.method, 'HEAD');
    assert.deepEqual(ok.check?.expect, [
      { from: 200, to: 204 },
      { from: 301, to: 302 },
    ]);
    // GET and 200-399 are the defaults: said aloud, the check is the one without them.
    const dflt = run({
      method: 'GET',
      expectedStatuses: [
        { from: 200, to: 299 },
        { from: 300, to: 399 },
      ],
    }).check;
    assert.equal(dflt?.method, undefined);
    assert.equal(dflt?.expect, undefined);
    for (const [hc, why] of [
      [
        { expectedStatuses: [{ from: 300, to: 200 }] },
        /Invalid: spec\.healthCheck\.expectedStatuses\.0: from must not exceed to/,
      ],
      [{ expectedStatuses: [{ from: 600 }] }, /Invalid: spec\.healthCheck\.expectedStatuses\.0\.from/],
      [{ expectedStatuses: [] }, /Invalid: spec\.healthCheck\.expectedStatuses/],
      [{ method: 'PUT' }, /Invalid: spec\.healthCheck\.method/],
      [
        { expectedStatuses: [{ from: 200, to: 299, also: 1 }] },
        /Invalid: spec\.healthCheck\.expectedStatuses\.0/,
      ],
    ] as const) {
      const st = run(hc);
      assert.match(st.why, why, JSON.stringify(hc));
      assert.equal(st.check, undefined, `${JSON.stringify(hc)}: refused, the members keep their TCP check`);
    }
    assert.match(
      run({ expectedStatuses: [{ from: 200 }] }, { ...any, checkStatuses: undefined }).why,
      /Invalid: the memory load balancer's checks expect 2xx or 3xx only \(healthCheck\.expectedStatuses 200\)/,
    );
    assert.match(
      run({ method: 'HEAD' }, { ...any, checkMethods: false }).why,
      /Invalid: the memory load balancer's checks send GET only/,
    );
    // Whole classes only (Avi): 200-299 is one, 200-204 is not.
    const classes: Capabilities = { ...any, checkStatuses: 'classes' };
    assert.deepEqual(run({ expectedStatuses: [{ from: 200, to: 299 }] }, classes).check?.expect, [
      { from: 200, to: 299 },
    ]);
    assert.match(
      run({ expectedStatuses: [{ from: 200, to: 204 }] }, classes).why,
      /whole classes of statuses only .* not 200-204/,
    );
    // A TCP check takes neither (the CRD's rule, again at the boundary).
    const r = buildDesired(
      clusterView({
        services: [
          kubeService('web', { type: 'LoadBalancer', ports: [{ name: 'http', port: 80, targetPort: 8080 }] }),
        ],
        nodes: [kubeNode('n1', '192.0.2.101')],
        pods: [],
        backendPolicies: [
          policy('hc', { targetRefs: [target('web')], healthCheck: { type: 'TCP', method: 'HEAD' } }),
        ],
      }),
      cfg,
      { ...SERVE_ALL, caps: any },
    );
    assert.match(
      r.policies!.get('default/hc')![0]!.conditions[0]!.message,
      /method and expectedStatuses are for an HTTP check/,
    );
  });

  it('member timeouts where the load balancer can set them; refused whole where it cannot, naming which', () => {
    const timed = (spec: Record<string, unknown>, caps: Capabilities) =>
      resolveBackendPolicies([policy('p', { targetRefs: [target('web')], ...spec })], [web], caps, 'lb');
    const both: Capabilities = { ...all, timeouts: { connect: true, server: true } };
    assert.deepEqual(
      timed({ timeouts: { connectSeconds: 3, serverSeconds: 120 } }, both).forPort('default/web', 'http'),
      {
        connectTimeoutSeconds: 3,
        serverTimeoutSeconds: 120,
        policy: 'default/p',
      },
    );
    // Avi: a pool has a server timeout, not a connect one; the policy then applies nowhere.
    const serverOnly: Capabilities = { ...all, timeouts: { connect: false, server: true } };
    const refused = timed({ timeouts: { connectSeconds: 3, serverSeconds: 120 } }, serverOnly);
    assert.equal(refused.forPort('default/web', 'http'), undefined);
    assert.match(
      refused.statuses.get('default/p')![0]!.conditions[0]!.message,
      /cannot set a pool's connect timeout/,
    );
    assert.deepEqual(timed({ timeouts: { serverSeconds: 120 } }, serverOnly).forPort('default/web', 'http'), {
      serverTimeoutSeconds: 120,
      policy: 'default/p',
    });
    const { timeouts: _t, ...none } = both;
    assert.match(
      timed({ timeouts: { serverSeconds: 5 } }, none).statuses.get('default/p')![0]!.conditions[0]!.message,
      /cannot set a pool's server timeout/,
    );
    for (const [bad, field] of [
      [{ timeouts: {} }, /timeouts names connectSeconds, serverSeconds or both/],
      [{ timeouts: { connectSeconds: 0 } }, /spec\.timeouts\.connectSeconds/],
      [{ timeouts: { serverSeconds: 86401 } }, /spec\.timeouts\.serverSeconds/],
      [{ timeouts: { serverSeconds: -1 } }, /spec\.timeouts\.serverSeconds/],
      [{ timeouts: { idleSeconds: 5 } }, /spec\.timeouts/],
    ] as const) {
      const c = timed(bad, both).statuses.get('default/p')![0]!.conditions[0]!;
      assert.equal(c.reason, 'Invalid', JSON.stringify(bad));
      assert.match(c.message, field);
    }
  });

  it('a connection limit and a ramp where the load balancer has them, in the steps it counts', () => {
    const limited = (spec: Record<string, unknown>, caps: Capabilities) =>
      resolveBackendPolicies([policy('p', { targetRefs: [target('web')], ...spec })], [web], caps, 'avi');
    const avi: Capabilities = { ...all, maxConnections: true, slowStart: { stepSeconds: 60 } };
    assert.deepEqual(
      limited({ maxConnectionsPerMember: 100, slowStartSeconds: 120 }, avi).forPort('default/web', 'http'),
      {
        maxConnections: 100,
        slowStartSeconds: 120,
        policy: 'default/p',
      },
    );
    const odd = limited({ slowStartSeconds: 90 }, avi);
    assert.equal(odd.forPort('default/web', 'http'), undefined);
    assert.match(
      odd.statuses.get('default/p')![0]!.conditions[0]!.message,
      /steps of 60 s: slowStartSeconds 90/,
    );
    const { maxConnections: _m, slowStart: _s, ...none } = avi;
    assert.match(
      limited({ maxConnectionsPerMember: 5 }, none).statuses.get('default/p')![0]!.conditions[0]!.message,
      /cannot limit connections per member/,
    );
    assert.match(
      limited({ slowStartSeconds: 60 }, none).statuses.get('default/p')![0]!.conditions[0]!.message,
      /cannot ramp members up/,
    );
    for (const bad of [
      { maxConnectionsPerMember: 0 },
      { slowStartSeconds: 3601 },
      { maxConnectionsPerMember: 1.5 },
    ])
      assert.equal(
        limited(bad, avi).statuses.get('default/p')![0]!.conditions[0]!.reason,
        'Invalid',
        JSON.stringify(bad),
      );
  });

  it('retries: resolved where the load balancer sets them (0 too); an L4 pool where it sets them on HTTP pools only keeps the default and its Service is told; bad values and a load balancer without them refused', () => {
    const cfg = parseControllerConfig(
      'clusterName: c1\nvip: {cidrs: [192.0.2.0/28]}\ndefaultLoadBalancer: true',
    );
    const resolved = (spec: Record<string, unknown>, caps: Capabilities) =>
      resolveBackendPolicies([policy('p', { targetRefs: [target('web')], ...spec })], [web], caps, 'x');
    assert.deepEqual(
      resolved({ retries: { attempts: 2 } }, { ...all, retries: 'any' }).forPort('default/web', 'http'),
      {
        retries: 2,
        policy: 'default/p',
      },
    );
    assert.deepEqual(
      resolved({ retries: { attempts: 0 } }, { ...all, retries: 'any' }).forPort('default/web', 'http'),
      {
        retries: 0,
        policy: 'default/p',
      },
    );
    const without = resolved({ retries: { attempts: 1 } }, all);
    assert.equal(without.forPort('default/web', 'http'), undefined, 'refused whole, applied nowhere');
    assert.match(
      without.statuses.get('default/p')![0]!.conditions[0]!.message,
      /cannot set how often a failed connection is tried again/,
    );
    for (const bad of [
      { retries: { attempts: 6 } },
      { retries: { attempts: -1 } },
      { retries: { attempts: 1.5 } },
      { retries: {} },
      { retries: { attempts: 1, on: '5xx' } },
    ]) {
      const c = resolved(bad, { ...all, retries: 'any' }).statuses.get('default/p')![0]!.conditions[0]!;
      assert.equal(c.reason, 'Invalid', JSON.stringify(bad));
      assert.match(c.message, /spec\.retries/);
    }
    // Through a build: the L4 and HTTP pools of the Service.
    const view = clusterView({
      services: [
        kubeService('web', { type: 'LoadBalancer', ports: [{ name: 'http', port: 80, targetPort: 8080 }] }),
      ],
      ingressClasses: [kubeIngressClass('npl')],
      ingresses: [kubeIngress('ing', { className: 'npl', host: 'a.example', service: 'web', port: 'http' })],
      nodes: [kubeNode('n1', '192.0.2.101')],
      pods: [kubePod('a', { node: 'n1', npl: nplAnnotation([[8080, '192.0.2.101', 61000]]) })],
      backendPolicies: [policy('retry', { targetRefs: [target('web')], retries: { attempts: 3 } })],
    });
    const pools = (retries: 'any' | 'http') => {
      const r = buildDesired(view, cfg, { ...SERVE_ALL, caps: { ...all, retries } });
      return { byHealth: new Map(r.state.pools.map((p) => [p.health, p.retries])), findings: r.findings };
    };
    const any = pools('any');
    assert.deepEqual([any.byHealth.get('tcp'), any.byHealth.get('http')], [3, 3]);
    assert.equal(any.findings.filter((f) => f.reason === 'PolicyNotApplied').length, 0);
    const http = pools('http');
    assert.deepEqual([http.byHealth.get('tcp'), http.byHealth.get('http')], [undefined, 3]);
    const told = http.findings.filter((f) => f.reason === 'PolicyNotApplied');
    assert.equal(told.length, 1);
    assert.match(told[0]!.message, /asks retries, which this load balancer sets on HTTP pools only/);
  });

  it('keyed hashes (a header or a cookie): resolved with their key, refused without one or with a bad one, refused where the load balancer lacks them; an L4 pool balances by round robin instead, said', () => {
    const cfg = parseControllerConfig(
      'clusterName: c1\nvip: {cidrs: [192.0.2.0/28]}\ndefaultLoadBalancer: true',
    );
    const resolved = (spec: Record<string, unknown>, caps: Capabilities = all) =>
      resolveBackendPolicies([policy('p', { targetRefs: [target('web')], ...spec })], [web], caps, 'x');
    const keyedCaps: Capabilities = { ...all, algorithms: ['RoundRobin', 'HeaderHash', 'CookieHash'] };
    assert.deepEqual(
      resolved({ algorithm: 'HeaderHash', hashKey: 'x-user' }, keyedCaps).forPort('default/web', 'http'),
      {
        algorithm: 'HeaderHash',
        hashKey: 'x-user',
        policy: 'default/p',
      },
    );
    for (const [bad, why] of [
      [{ algorithm: 'HeaderHash' }, /hashKey names the header/],
      [{ algorithm: 'LeastConnections', hashKey: 'x-user' }, /hashKey names the header/],
      [{ algorithm: 'CookieHash', hashKey: 'a b' }, /spec\.hashKey: a header or cookie name/],
      [{ algorithm: 'CookieHash', hashKey: 'x'.repeat(65) }, /spec\.hashKey/],
    ] as const) {
      const c = resolved(bad, keyedCaps).statuses.get('default/p')![0]!.conditions[0]!;
      assert.equal(c.reason, 'Invalid', JSON.stringify(bad));
      assert.match(c.message, why);
    }
    assert.match(
      resolved(
        { algorithm: 'CookieHash', hashKey: 'sid' },
        { ...all, algorithms: ['RoundRobin', 'HeaderHash'] },
      ).statuses.get('default/p')![0]!.conditions[0]!.message,
      /cannot balance by CookieHash/,
    );
    const view = clusterView({
      services: [
        kubeService('web', { type: 'LoadBalancer', ports: [{ name: 'http', port: 80, targetPort: 8080 }] }),
      ],
      ingressClasses: [kubeIngressClass('npl')],
      ingresses: [kubeIngress('ing', { className: 'npl', host: 'a.example', service: 'web', port: 'http' })],
      nodes: [kubeNode('n1', '192.0.2.101')],
      pods: [kubePod('a', { node: 'n1', npl: nplAnnotation([[8080, '192.0.2.101', 61000]]) })],
      backendPolicies: [
        policy('hash', { targetRefs: [target('web')], algorithm: 'CookieHash', hashKey: 'sid' }),
      ],
    });
    const r = buildDesired(view, cfg, { ...SERVE_ALL, caps: keyedCaps });
    const byHealth = new Map(r.state.pools.map((p) => [p.health, [p.algorithm, p.hashKey]]));
    assert.deepEqual(byHealth.get('http'), ['CookieHash', 'sid']);
    assert.deepEqual(byHealth.get('tcp'), [undefined, undefined]);
    assert.match(
      r.findings.find((f) => f.reason === 'PolicyNotApplied')?.message ?? '',
      /asks CookieHash, a hash of what HTTP requests carry; its LoadBalancer virtual service .* round robin/,
    );
  });
});
