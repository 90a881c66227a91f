/**
 * No field of an HTTPRoute is dropped silently (issue 32): every leaf of the v1.6.1 standard
 * channel's HTTPRoute spec schema (read from the bundled CRD) is set by a fragment below that says
 * what happens to it: carried into the model (checked on the virtual service the pass builds),
 * accepted with no effect on serving (parent references, a rule's name), or refused with a
 * condition naming it. A property then combines random fragments on one route: any refused one
 * makes the route say so, and otherwise every carried one is in the model. A field added to the
 * schema with no fragment fails the first test.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { ALL_HTTP } from '../../../src/adapter/http-capabilities.ts';
import { backend, INFRA, parent, pass, route, vsOf } from './gateway-support.ts';
import { BASE_PATHS, type Draft, FRAGMENTS, type Fragment } from './route-fragments.ts';
import { assertAlone, assertCovered } from './fragment-checks.ts';
import { schemaLeaves } from './schema-leaves.ts';

function build(fragments: Fragment[]) {
  const d: Draft = {
    spec: {
      hostnames: [],
      parentRefs: [{ ...parent('same-namespace'), group: 'gateway.networking.k8s.io', kind: 'Gateway' }],
      rules: [
        {
          matches: [{ path: { type: 'PathPrefix', value: '/base' } }],
          filters: [],
          backendRefs: [backend('infra-backend-v1', 8080, { namespace: INFRA })],
        },
      ],
    },
  };
  for (const f of fragments) f.apply(d);
  const r = pass({
    routes: [route(INFRA, 'fields', d.spec)],
    http: { ...ALL_HTTP, timeouts: true, cors: true, mirror: { maxPerRoute: 4 } },
  });
  const parentStatus = r.routes.get(`HTTPRoute ${INFRA}/fields`)?.parents[0];
  const routes = (vsOf(r, `${INFRA}/same-namespace`)?.routes ?? []).filter(
    (x) => x.source === `HTTPRoute ${INFRA}/fields`,
  );
  return { conditions: parentStatus?.conditions ?? [], routes };
}

describe('HTTPRoute fields: carried or refused, never dropped (property)', () => {
  it('every leaf of the v1.6.1 HTTPRoute schema is covered by a fragment saying what happens to it', () => {
    const covered = new Set([...BASE_PATHS, ...FRAGMENTS.flatMap((f) => f.paths)]);
    const leaves = schemaLeaves('HTTPRoute');
    assert.ok(leaves.length > 90, `${leaves.length} leaves read from the CRD`);
    assertCovered(leaves, covered);
  });

  it('each fragment alone: carried into the model, accepted, or refused naming the field', () => {
    for (const f of FRAGMENTS) assertAlone(f, build([f]));
  });

  it('any combination: a refused field refuses the route naming one; otherwise every carried one is in the model', () => {
    fc.assert(
      fc.property(fc.subarray(FRAGMENTS, { minLength: 1, maxLength: 6 }), (picked) => {
        const seenGroups = new Set<string>();
        const fragments = picked.filter(
          (f) => !f.group || (!seenGroups.has(f.group) && seenGroups.add(f.group)),
        );
        const { conditions, routes } = build(fragments);
        const refused = fragments.filter((f) => f.expect === 'refused');
        if (refused.length) {
          const why = conditions.find((c) => !c.status);
          return why !== undefined && refused.some((f) => f.says!.test(why.message)) && routes.length === 0;
        }
        const accepted = conditions.find((c) => c.type === 'Accepted')?.status === true;
        const ids = new Set(fragments.map((f) => f.id));
        return (
          accepted &&
          routes.length > 0 &&
          fragments.every((f) => !f.seen || (f.moot ?? []).some((m) => ids.has(m)) || f.seen(routes))
        );
      }),
      { numRuns: 300 },
    );
  });
});
