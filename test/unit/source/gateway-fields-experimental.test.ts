/**
 * No field of the experimental channel's HTTPRoute is dropped silently either: with its CRD
 * installed (`npl-lb demo --gateway-api-channel experimental`), each leaf it adds to the standard
 * one (v1.6.1: a rule's retry and sessionPersistence, the ExternalAuth filter, the route's
 * useDefaultGateways) is set by a fragment below saying what happens to it, on a load balancer
 * that retries by route (HAProxy's capabilities): carried, accepted without effect, or refused
 * naming the field. A field the next bundle adds with no fragment fails the first test.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { HAPROXY_CAPABILITIES } from '../../../adapters/haproxy/capabilities.ts';
import { backend, INFRA, parent, pass, route, vsOf } from './gateway-support.ts';
import type { Draft, Fragment } from './route-fragments.ts';
import { assertAlone, assertCovered } from './fragment-checks.ts';
import { schemaLeaves } from './schema-leaves.ts';

const P = 'spec.rules[].';
const authPaths = [
  'externalAuth.backendRef.group',
  'externalAuth.backendRef.kind',
  'externalAuth.backendRef.name',
  'externalAuth.backendRef.namespace',
  'externalAuth.backendRef.port',
  'externalAuth.forwardBody.maxSize',
  'externalAuth.grpc.allowedHeaders[]',
  'externalAuth.http.allowedHeaders[]',
  'externalAuth.http.allowedResponseHeaders[]',
  'externalAuth.http.path',
  'externalAuth.protocol',
];
const externalAuth = {
  type: 'ExternalAuth',
  externalAuth: { protocol: 'HTTP', backendRef: { name: 'auth', port: 8080 }, http: { path: '/check' } },
};

/** What the experimental channel adds to the standard HTTPRoute (v1.6.1), and what npl-lb does with it. */
const EXPERIMENTAL: Fragment[] = [
  {
    id: 'retry',
    paths: [`${P}retry.attempts`, `${P}retry.codes[]`],
    apply: (d) => void (d.spec.rules[0]!.retry = { codes: [500, 503], attempts: 2 }),
    expect: 'carried',
    seen: (rs) => rs.every((r) => r.pool.includes('.retry-')),
  },
  {
    id: 'retry backoff',
    paths: [`${P}retry.backoff`],
    apply: (d) => void (d.spec.rules[0]!.retry = { attempts: 2, backoff: '100ms' }),
    expect: 'refused',
    says: /retry\.backoff: .* cannot wait between attempts/,
  },
  {
    id: 'sessionPersistence',
    paths: [
      `${P}sessionPersistence.absoluteTimeout`,
      `${P}sessionPersistence.cookieConfig.lifetimeType`,
      `${P}sessionPersistence.sessionName`,
    ],
    apply: (d) =>
      void (d.spec.rules[0]!.sessionPersistence = {
        sessionName: 's',
        absoluteTimeout: '10m',
        cookieConfig: { lifetimeType: 'Permanent' },
      }),
    expect: 'carried',
    seen: (rs) => rs.every((r) => r.pool.includes('.session-')),
  },
  {
    id: 'sessionPersistence of type Header',
    paths: [`${P}sessionPersistence.type`],
    apply: (d) => void (d.spec.rules[0]!.sessionPersistence = { type: 'Header', sessionName: 's' }),
    expect: 'refused',
    says: /sessionPersistence\.type: "Header".*keeps sessions by cookie only/,
  },
  {
    id: 'ExternalAuth filter',
    paths: [...authPaths.map((p) => `${P}filters[].${p}`)],
    apply: (d) => void d.spec.rules[0]!.filters.push(externalAuth),
    expect: 'refused',
    says: /filter type ExternalAuth is not supported/,
  },
  {
    id: 'ExternalAuth backendRef filter',
    paths: [...authPaths.map((p) => `${P}backendRefs[].filters[].${p}`)],
    apply: (d) => void (d.spec.rules[0]!.backendRefs[0]!.filters = [externalAuth]),
    expect: 'refused',
    says: /filter type ExternalAuth on a backendRef is not supported/,
  },
  // No Gateway of npl-lb is a default one (it reads no Gateway `defaultScope`, a field of the
  // experimental Gateway): None and All alike attach the route to its parentRefs alone.
  {
    id: 'useDefaultGateways',
    paths: ['spec.useDefaultGateways'],
    apply: (d) => void (d.spec.useDefaultGateways = 'All'),
    expect: 'accepted',
  },
];

function build(f: Fragment) {
  const d: Draft = {
    spec: {
      hostnames: [],
      parentRefs: [parent('same-namespace')],
      rules: [
        {
          matches: [{ path: { type: 'PathPrefix', value: '/base' } }],
          filters: [],
          backendRefs: [backend('infra-backend-v1', 8080, { namespace: INFRA })],
        },
      ],
    },
  };
  f.apply(d);
  const r = pass({ routes: [route(INFRA, 'fields', d.spec)], http: HAPROXY_CAPABILITIES.http! });
  const conditions = r.routes.get(`HTTPRoute ${INFRA}/fields`)?.parents[0]?.conditions ?? [];
  const routes = (vsOf(r, `${INFRA}/same-namespace`)?.routes ?? []).filter(
    (x) => x.source === `HTTPRoute ${INFRA}/fields`,
  );
  return { conditions, routes };
}

describe('HTTPRoute fields of the experimental channel: carried or refused, never dropped', () => {
  it('every leaf the experimental CRD adds to the standard one is covered by a fragment', () => {
    const standard = new Set(schemaLeaves('HTTPRoute'));
    const added = schemaLeaves('HTTPRoute', 'experimental').filter((p) => !standard.has(p));
    assert.ok(added.length >= 20, `${added.length} leaves only the experimental CRD has`);
    const covered = new Set(EXPERIMENTAL.flatMap((f) => f.paths));
    assertCovered(added, covered);
  });

  it('each: carried into the model, accepted, or refused naming the field', () => {
    for (const f of EXPERIMENTAL) assertAlone(f, build(f));
  });
});
