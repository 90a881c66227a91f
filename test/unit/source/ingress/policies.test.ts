/**
 * Ingress policy annotations (issue 33, item 2: the common settings for Ingress authors): they
 * reach the HTTP pools of the Services the Ingress routes to (named and numbered ports), pass the
 * BackendPolicy boundary (a bad value or one the load balancer cannot do is a Warning on the
 * Ingress and applies nowhere), the oldest of two Ingresses wins a Service port, and a
 * BackendPolicy on the Service wins over them, said on the Ingress. L4 pools never take them.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Capabilities } from '../../../../src/adapter/contract.ts';
import { parseControllerConfig } from '../../../../src/config/controller-config.ts';
import { type Ingress, ingressSchema } from '../../../../src/kube/objects.ts';
import { backendPolicySchema } from '../../../../src/kube/policy-objects.ts';
import { buildDesired } from '../../../../src/source/desired.ts';
import { SERVE_ALL } from '../../../../src/source/gateway/from-view.ts';
import { ingressPolicies } from '../../../../src/source/ingress/policies.ts';
import {
  clusterView,
  ingressBody,
  kubeIngressClass,
  kubeNode,
  kubePod,
  kubeService,
  nplAnnotation,
} from '../../../support/kube-objects.ts';

const all: Capabilities = {
  ...SERVE_ALL.caps,
  algorithms: ['RoundRobin', 'LeastConnections', 'SourceHash'],
  persistence: ['Cookie', 'SourceIP'],
  timeouts: { connect: true, server: true },
};
const web = kubeService('web', {
  type: 'LoadBalancer',
  ports: [
    { name: 'http', port: 80, targetPort: 8080 },
    { name: 'admin', port: 9090, targetPort: 9090 },
  ],
});
const services = new Map([['default/web', web]]);

const ing = (
  name: string,
  annotations: Record<string, string>,
  port: number | string = 'http',
  created = '2026-01-01T00:00:00Z',
): Ingress => {
  const body = ingressBody(name, { className: 'npl', host: `${name}.example`, service: 'web', port });
  return ingressSchema.parse({
    ...body,
    metadata: { ...body.metadata, annotations, creationTimestamp: created },
  });
};

describe('Ingress policy annotations', () => {
  it('reach the Service port the Ingress routes to, by name or number', () => {
    const r = ingressPolicies(
      [
        ing('a', {
          'npl-lb.io/load-balance': 'LeastConnections',
          'npl-lb.io/session-persistence': 'Cookie',
          'npl-lb.io/server-timeout-seconds': '120',
        }),
        ing('b', { 'npl-lb.io/load-balance': 'SourceHash' }, 9090),
      ],
      services,
      all,
      'lb',
    );
    assert.deepEqual(r.forPort('default/web', 'http'), {
      algorithm: 'LeastConnections',
      persistence: 'Cookie',
      serverTimeoutSeconds: 120,
      policy: 'Ingress default/a annotations',
    });
    assert.equal(r.forPort('default/web', 'admin')?.algorithm, 'SourceHash');
    assert.deepEqual(r.findings, []);
    assert.equal(
      ingressPolicies([ing('c', {})], services, all, 'lb').forPort('default/web', 'http'),
      undefined,
    );
  });

  it('a bad value, or one the load balancer cannot do, is a Warning on the Ingress and applies nowhere', () => {
    const cases: [Record<string, string>, RegExp, Capabilities][] = [
      [{ 'npl-lb.io/load-balance': 'Fastest' }, /npl-lb\.io\/load-balance: Invalid option/, all],
      [{ 'npl-lb.io/session-persistence': 'Header' }, /npl-lb\.io\/session-persistence: Invalid option/, all],
      [
        { 'npl-lb.io/server-timeout-seconds': 'soon' },
        /server-timeout-seconds: "soon" is not a number of seconds/,
        all,
      ],
      [{ 'npl-lb.io/server-timeout-seconds': '0' }, /npl-lb\.io\/server-timeout-seconds: Too/, all],
      [{ 'npl-lb.io/server-timeout-seconds': '86401' }, /npl-lb\.io\/server-timeout-seconds: Too/, all],
      [
        { 'npl-lb.io/session-persistence': 'SourceIP' },
        /cannot keep sessions by SourceIP/,
        { ...all, persistence: ['Cookie'] },
      ],
      [
        { 'npl-lb.io/server-timeout-seconds': '30' },
        /cannot set a pool's server timeout/,
        { ...all, timeouts: undefined },
      ],
    ];
    for (const [annotations, why, caps] of cases) {
      const r = ingressPolicies([ing('a', annotations)], services, caps, 'lb');
      assert.equal(r.forPort('default/web', 'http'), undefined, JSON.stringify(annotations));
      assert.equal(r.findings.length, 1);
      assert.equal(r.findings[0]!.kind, 'Ingress');
      assert.equal(r.findings[0]!.reason, 'PolicyNotApplied');
      assert.match(r.findings[0]!.message, why);
      assert.match(r.findings[0]!.message, /apply nowhere$/);
    }
  });

  it('two Ingresses on one Service port: the oldest wins, the other is told; equal asks agree', () => {
    const young = ing('young', { 'npl-lb.io/load-balance': 'SourceHash' }, 'http', '2026-02-01T00:00:00Z');
    const old = ing('old', { 'npl-lb.io/load-balance': 'LeastConnections' }, 'http', '2026-01-01T00:00:00Z');
    const r = ingressPolicies([young, old], services, all, 'lb');
    assert.equal(r.forPort('default/web', 'http')?.algorithm, 'LeastConnections');
    assert.equal(r.findings.length, 1);
    assert.equal(r.findings[0]!.key, 'default/young');
    assert.match(
      r.findings[0]!.message,
      /already takes other policy annotations from Ingress default\/old \(older\)/,
    );
    const twin = ing(
      'twin',
      { 'npl-lb.io/load-balance': 'LeastConnections' },
      'http',
      '2026-03-01T00:00:00Z',
    );
    assert.deepEqual(ingressPolicies([old, twin], services, all, 'lb').findings, []);
  });

  it('in a build: the HTTP pool takes them, the L4 pool does not; a BackendPolicy on the Service wins, said on the Ingress', () => {
    const cfg = parseControllerConfig(
      'clusterName: c1\nvip: {cidrs: [192.0.2.0/28]}\ndefaultLoadBalancer: true',
    );
    const base = {
      services: [web],
      ingressClasses: [kubeIngressClass('npl')],
      ingresses: [
        ing('a', { 'npl-lb.io/session-persistence': 'Cookie', 'npl-lb.io/load-balance': 'LeastConnections' }),
      ],
      nodes: [kubeNode('n1', '192.0.2.101')],
      pods: [kubePod('p', { node: 'n1', npl: nplAnnotation([[8080, '192.0.2.101', 61000]]) })],
    };
    const r = buildDesired(clusterView(base), cfg, { ...SERVE_ALL, caps: all });
    const http = r.state.pools.find((p) => p.health === 'http' && p.servicePort === 'http')!;
    assert.equal(http.persistence, 'Cookie');
    assert.equal(http.algorithm, 'LeastConnections');
    for (const p of r.state.pools.filter((x) => x.health === 'tcp'))
      assert.equal(p.algorithm, undefined, p.name);
    assert.deepEqual(
      r.findings.filter((f) => f.reason === 'PolicyNotApplied'),
      [],
    );

    const policy = backendPolicySchema.parse({
      metadata: {
        name: 'owner',
        namespace: 'default',
        creationTimestamp: '2026-01-01T00:00:00Z',
        generation: 1,
      },
      spec: { targetRefs: [{ group: '', kind: 'Service', name: 'web' }], algorithm: 'SourceHash' },
    });
    const both = buildDesired(clusterView({ ...base, backendPolicies: [policy] }), cfg, {
      ...SERVE_ALL,
      caps: all,
    });
    const won = both.state.pools.find((p) => p.health === 'http' && p.servicePort === 'http')!;
    assert.equal(won.algorithm, 'SourceHash');
    assert.equal(won.persistence, undefined, 'the BackendPolicy as a whole, not merged');
    const told = both.findings.filter((f) => f.reason === 'PolicyNotApplied');
    assert.equal(told.length, 1);
    assert.equal(told[0]!.key, 'default/a');
    assert.match(
      told[0]!.message,
      /has BackendPolicy default\/owner, which wins over the policy annotations/,
    );
  });
});
