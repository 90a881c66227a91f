/**
 * No field of a GRPCRoute is dropped silently (issue 32), as gateway-fields.test.ts holds
 * HTTPRoute: every leaf of the v1.6.1 GRPCRoute spec schema (read from the bundled CRD) is set by
 * a fragment saying what happens to it (carried into the model, accepted with no effect on
 * serving, or refused naming it), and a property combines random fragments on one route.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { ALL_HTTP } from '../../../src/adapter/http-capabilities.ts';
import type { HttpRoute } from '../../../src/model/types.ts';
import { backend, grpcRoute, INFRA, parent, pass, vsOf } from './gateway-support.ts';
import { mirrorPaths, modifier } from './route-fragments.ts';
import { assertAlone, assertCovered } from './fragment-checks.ts';
import { schemaLeaves } from './schema-leaves.ts';

type Json = Record<string, unknown>;
type Rule = Json & { matches: Json[]; filters: Json[]; backendRefs: Json[] };
interface Draft {
  spec: Json & { hostnames: string[]; parentRefs: Json[]; rules: Rule[] };
}
interface Fragment {
  id: string;
  paths: string[];
  group?: string;
  apply: (d: Draft) => void;
  expect: 'carried' | 'accepted' | 'refused';
  seen?: (routes: HttpRoute[]) => boolean;
  says?: RegExp;
}

const SVC = 'gateway_api_conformance.echo_basic.grpcecho.GrpcEcho';
const P = 'spec.rules[].';
const F = `${P}filters[].`;
const BF = `${P}backendRefs[].filters[].`;
const rule = (d: Draft): Rule => d.spec.rules[0]!;
const filter = (d: Draft, f: Json) => rule(d).filters.push(f);
const extensionPaths = ['extensionRef.group', 'extensionRef.kind', 'extensionRef.name'];
const headerMod = {
  set: [{ name: 'X-Set', value: 's' }],
  add: [{ name: 'X-Add', value: 'a' }],
  remove: ['X-Gone'],
};

const FRAGMENTS: Fragment[] = [
  {
    id: 'hostnames',
    paths: ['spec.hostnames[]'],
    apply: (d) => void (d.spec.hostnames = ['a.example.com']),
    expect: 'carried',
    seen: (rs) => rs.every((r) => r.host === 'a.example.com'),
  },
  {
    id: 'parentRef port and section',
    paths: ['spec.parentRefs[].port', 'spec.parentRefs[].sectionName'],
    apply: (d) => Object.assign(d.spec.parentRefs[0]!, { port: 80, sectionName: 'http' }),
    expect: 'accepted',
  },
  { id: 'rule name', paths: [`${P}name`], apply: (d) => void (rule(d).name = 'named'), expect: 'accepted' },
  {
    id: 'exact method',
    group: 'method',
    paths: [`${P}matches[].method.type`, `${P}matches[].method.service`, `${P}matches[].method.method`],
    apply: (d) => void (rule(d).matches = [{ method: { type: 'Exact', service: SVC, method: 'EchoTwo' } }]),
    expect: 'carried',
    seen: (rs) => rs.some((r) => r.path === `/${SVC}/EchoTwo` && r.pathType === 'Exact'),
  },
  {
    id: 'regex method',
    group: 'method',
    paths: [`${P}matches[].method.type`, `${P}matches[].method.method`],
    apply: (d) => void (rule(d).matches = [{ method: { type: 'RegularExpression', method: 'Echo.*' } }]),
    expect: 'carried',
    seen: (rs) => rs.some((r) => r.pathType === 'RegularExpression' && r.path.includes('Echo.*')),
  },
  {
    id: 'headers',
    paths: [`${P}matches[].headers[].name`, `${P}matches[].headers[].type`, `${P}matches[].headers[].value`],
    apply: (d) => void (rule(d).matches[0]!.headers = [{ type: 'Exact', name: 'version', value: 'two' }]),
    expect: 'carried',
    seen: (rs) => rs.some((r) => r.headers?.some((h) => h.name === 'version' && h.value === 'two')),
  },
  {
    id: 'request headers',
    paths: [`${F}type`, ...modifier('requestHeaderModifier').map((p) => F + p)],
    apply: (d) => filter(d, { type: 'RequestHeaderModifier', requestHeaderModifier: headerMod }),
    expect: 'carried',
    seen: (rs) => rs.every((r) => r.requestHeaders?.add[0]?.name === 'X-Add'),
  },
  {
    id: 'response headers',
    paths: modifier('responseHeaderModifier').map((p) => F + p),
    apply: (d) => filter(d, { type: 'ResponseHeaderModifier', responseHeaderModifier: headerMod }),
    expect: 'carried',
    seen: (rs) => rs.every((r) => r.responseHeaders?.remove[0] === 'X-Gone'),
  },
  {
    id: 'weights',
    paths: ['weight', 'group', 'kind', 'namespace', 'name', 'port'].map((p) => `${P}backendRefs[].${p}`),
    apply: (d) =>
      rule(d).backendRefs.push({
        ...backend('grpc-infra-backend-v2', 8080, { group: '', kind: 'Service', namespace: INFRA }),
        weight: 3,
      }),
    expect: 'carried',
    seen: (rs) => rs.some((r) => (r.backends ?? []).some((b) => b.weight === 3)),
  },
  {
    id: 'mirror',
    paths: mirrorPaths.map((p) => F + p),
    apply: (d) =>
      filter(d, {
        type: 'RequestMirror',
        requestMirror: {
          backendRef: {
            group: '',
            kind: 'Service',
            name: 'grpc-infra-backend-v2',
            namespace: INFRA,
            port: 8080,
          },
          fraction: { numerator: 1, denominator: 2 },
        },
      }),
    expect: 'refused',
    says: /filter type RequestMirror is not supported/,
  },
  {
    id: 'extensionRef',
    paths: extensionPaths.map((p) => F + p),
    apply: (d) =>
      filter(d, { type: 'ExtensionRef', extensionRef: { group: 'example.com', kind: 'Thing', name: 'x' } }),
    expect: 'refused',
    says: /filter type ExtensionRef is not supported/,
  },
  {
    id: 'backendRef filters',
    paths: [
      `${BF}type`,
      ...modifier('requestHeaderModifier').map((p) => BF + p),
      ...modifier('responseHeaderModifier').map((p) => BF + p),
      ...mirrorPaths.map((p) => BF + p),
      ...extensionPaths.map((p) => BF + p),
    ],
    apply: (d) =>
      void (rule(d).backendRefs[0]!.filters = [
        { type: 'RequestHeaderModifier', requestHeaderModifier: headerMod },
      ]),
    expect: 'refused',
    says: /backendRef filters are not supported/,
  },
];
const BASE_PATHS = ['group', 'kind', 'name', 'namespace'].map((p) => `spec.parentRefs[].${p}`);

function build(fragments: Fragment[]) {
  const d: Draft = {
    spec: {
      hostnames: [],
      parentRefs: [{ ...parent('same-namespace'), group: 'gateway.networking.k8s.io', kind: 'Gateway' }],
      rules: [
        {
          matches: [{ method: { type: 'Exact', service: SVC, method: 'Echo' } }],
          filters: [],
          backendRefs: [backend('grpc-infra-backend-v1', 8080, { namespace: INFRA })],
        },
      ],
    },
  };
  for (const f of fragments) f.apply(d);
  const r = pass({
    grpcRoutes: [grpcRoute(INFRA, 'fields', d.spec)],
    support: { http2: true },
    http: { ...ALL_HTTP, http2: true },
  });
  const conditions = r.routes.get(`GRPCRoute ${INFRA}/fields`)?.parents[0]?.conditions ?? [];
  const routes = (vsOf(r, `${INFRA}/same-namespace`)?.routes ?? []).filter(
    (x) => x.source === `GRPCRoute ${INFRA}/fields`,
  );
  return { conditions, routes };
}

describe('GRPCRoute fields: carried or refused, never dropped (property)', () => {
  it('every leaf of the v1.6.1 GRPCRoute schema is covered by a fragment saying what happens to it', () => {
    const covered = new Set([...BASE_PATHS, ...FRAGMENTS.flatMap((f) => f.paths)]);
    const leaves = schemaLeaves('GRPCRoute');
    assert.ok(leaves.length > 60, `${leaves.length} leaves read from the CRD`);
    assertCovered(leaves, covered);
  });

  it('each fragment alone: carried into the model, accepted, or refused naming the field', () => {
    for (const f of FRAGMENTS) assertAlone(f, build([f]));
  });

  it('any combination: a refused field refuses the route naming one; otherwise every carried one is in the model', () => {
    fc.assert(
      fc.property(fc.subarray(FRAGMENTS, { minLength: 1, maxLength: 6 }), (picked) => {
        const groups = new Set<string>();
        const fragments = picked.filter((f) => !f.group || (!groups.has(f.group) && groups.add(f.group)));
        const { conditions, routes } = build(fragments);
        const refused = fragments.filter((f) => f.expect === 'refused');
        if (refused.length) {
          const why = conditions.find((c) => !c.status);
          return why !== undefined && refused.some((f) => f.says!.test(why.message)) && routes.length === 0;
        }
        const accepted = conditions.find((c) => c.type === 'Accepted')?.status === true;
        return accepted && routes.length > 0 && fragments.every((f) => !f.seen || f.seen(routes));
      }),
      { numRuns: 200 },
    );
  });
});
