/**
 * Issue 48, item 0 (BackendTLSPolicy half): a BackendTLSPolicy is never ignored. While the load
 * balancer does not speak TLS to backends, a route's backendRef to a Service port a policy targets
 * does not resolve (ResolvedRefs=False, UnsupportedProtocol, naming the policy) and its share
 * answers 500, never sent in clear text; the policy says so in its ancestors' status (the route's
 * Gateway, Accepted=False). The policy's own namespace, its sectionName (the Service port's name)
 * and the older-wins rule decide which policy is named (a device that declares backend TLS:
 * backend-tls-reencrypt.test.ts). Every leaf of the bundled v1.6.1 BackendTLSPolicy schema is listed with what happens to it.
 */
import { backendTlsPolicySchema } from '../../../src/kube/backend-tls-objects.ts';
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { backend, INFRA, parent, parentConditions, pass, route, vsOf } from './gateway-support.ts';
import { schemaLeaves } from './schema-leaves.ts';

const policy = (
  name: string,
  target: Record<string, unknown>,
  o: { namespace?: string; created?: string } = {},
) =>
  backendTlsPolicySchema.parse({
    metadata: {
      namespace: o.namespace ?? INFRA,
      name,
      generation: 1,
      creationTimestamp: o.created ?? '2026-01-01T00:00:00Z',
    },
    spec: {
      targetRefs: [{ group: '', kind: 'Service', ...target }],
      validation: {
        hostname: 'backend.example.com',
        caCertificateRefs: [{ group: '', kind: 'ConfigMap', name: 'ca' }],
      },
    },
  });

const routeTo = (port = 8080) =>
  route(INFRA, 'to-tls', {
    parentRefs: [parent('same-namespace')],
    rules: [{ backendRefs: [backend('infra-backend-v1', port)] }],
  });

function run(policies: ReturnType<typeof policy>[], support = {}, port = 8080) {
  const r = pass({ routes: [routeTo(port)], backendTlsPolicies: policies, support });
  const routes = (vsOf(r, `${INFRA}/same-namespace`)?.routes ?? []).filter(
    (x) => x.source === `HTTPRoute ${INFRA}/to-tls`,
  );
  const status = r.routes
    .get(`HTTPRoute ${INFRA}/to-tls`)
    ?.parents[0]?.conditions.find((c) => c.type === 'ResolvedRefs');
  return {
    r,
    routes,
    conditions: parentConditions(r, `${INFRA}/to-tls`)[0] ?? [],
    message: status?.message ?? '',
  };
}

/** What npl-lb does with each field of a BackendTLSPolicy (by prefix). */
const POLICY_FIELDS: Record<string, string> = {
  'spec.targetRefs[]': 'read: the Service (and its port, by sectionName) spoken to over TLS',
  'spec.validation.hostname': 'sent as SNI and verified (a DNS name, checked)',
  'spec.validation.caCertificateRefs[]':
    'ConfigMaps read for ca.crt (parsed, written again); other kinds InvalidKind',
  'spec.validation.wellKnownCACertificates':
    'System where the device declares its CAs; else Accepted=False, Invalid',
  'spec.validation.subjectAltNames[]':
    'Hostname names verified (up to what the device verifies); URI refused by name',
  'spec.options': 'any key refused with the policy (Accepted=False, Invalid): none is served yet',
};

describe('BackendTLSPolicy: never ignored, never clear text', () => {
  it('every leaf of the v1.6.1 BackendTLSPolicy schema says what npl-lb does with it', () => {
    const leaves = schemaLeaves('BackendTLSPolicy');
    assert.ok(leaves.length >= 12, `${leaves.length} leaves`);
    const said = (l: string) =>
      Object.keys(POLICY_FIELDS).some((p) => l === p || l.startsWith(`${p}.`) || l.startsWith(p));
    assert.deepEqual(
      leaves.filter((l) => !said(l)),
      [],
    );
  });

  it('a ref to a targeted Service does not resolve, answers 500, and the policy tells its Gateway', () => {
    const clear = run([]);
    assert.ok(clear.conditions.includes('ResolvedRefs=True/ResolvedRefs'));
    assert.ok(
      clear.routes.length > 0 && clear.routes.every((x) => x.pool !== ''),
      'served in clear text when nobody asks TLS',
    );

    const t = run([policy('tls', { name: 'infra-backend-v1' })]);
    assert.ok(t.conditions.includes('Accepted=True/Accepted'), 'the route stays accepted');
    assert.ok(t.conditions.includes('ResolvedRefs=False/UnsupportedProtocol'), t.conditions.join());
    assert.match(
      t.message,
      /BackendTLSPolicy gateway-conformance-infra\/tls: the memory load balancer does not speak TLS to backends.*never in clear text/,
    );
    assert.ok(t.routes.length > 0, 'the route keeps its place');
    for (const x of t.routes) {
      assert.equal(x.pool, '', 'no pool: never the clear-text one');
      assert.deepEqual(x.backends, [{ pool: null, weight: 1 }], 'its share answers 500');
    }
    const st = t.r.tlsPolicies?.get(`${INFRA}/tls`);
    assert.deepEqual(
      st?.map((a) => a.ancestorRef),
      [{ group: 'gateway.networking.k8s.io', kind: 'Gateway', namespace: INFRA, name: 'same-namespace' }],
    );
    assert.deepEqual(
      st?.[0]?.conditions.map((c) => `${c.type}=${c.status}/${c.reason}`),
      ['Accepted=false/Invalid'],
    );
  });

  it('sectionName (the port’s name), the policy’s namespace, the older policy, and a device that can', () => {
    assert.ok(
      run([policy('p', { name: 'infra-backend-v1', sectionName: 'first-port' })]).conditions.includes(
        'ResolvedRefs=False/UnsupportedProtocol',
      ),
    );
    assert.ok(
      run([policy('p', { name: 'infra-backend-v1', sectionName: 'second-port' })]).conditions.includes(
        'ResolvedRefs=True/ResolvedRefs',
      ),
      'another port',
    );
    assert.ok(
      run([
        policy('p', { name: 'infra-backend-v1' }, { namespace: 'gateway-conformance-app-backend' }),
      ]).conditions.includes('ResolvedRefs=True/ResolvedRefs'),
      'a policy targets Services of its own namespace',
    );
    const two = run([
      policy('newer', { name: 'infra-backend-v1' }, { created: '2026-02-01T00:00:00Z' }),
      policy('older', { name: 'infra-backend-v1' }, { created: '2026-01-01T00:00:00Z' }),
    ]);
    assert.match(two.message, /BackendTLSPolicy gateway-conformance-infra\/older/);
    // Hostile values stay data: a target name with quotes or config syntax matches nothing.
    assert.ok(
      run([policy('p', { name: 'infra-backend-v1" } or { 1' })]).conditions.includes(
        'ResolvedRefs=True/ResolvedRefs',
      ),
    );
  });
});
