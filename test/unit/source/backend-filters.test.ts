/**
 * Issue 48, item 5: a backendRef's own RequestHeaderModifier (HTTPRouteBackendRequestHeaderModification).
 * Where the load balancer applies it per backend, it rides on that backend of the route (even a
 * route's only one) and the model applies it after the route's own when that backend is picked;
 * a filter of another type on a backendRef, a header value with a line break, or any backendRef
 * filter where the load balancer does not declare them refuses the route by name, never dropped.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ALL_HTTP } from '../../../src/adapter/http-capabilities.ts';
import { resolveRequest } from '../../../src/model/http-match.ts';
import { backend, INFRA, parent, parentConditions, pass, pool, route, vsOf } from './gateway-support.ts';

const set = (name: string, value: string) => ({
  type: 'RequestHeaderModifier',
  requestHeaderModifier: { set: [{ name, value }] },
});

function run(backendRefs: Record<string, unknown>[], backendHeaderModifiers = true, filters: unknown[] = []) {
  const r = pass({
    routes: [
      route(INFRA, 'bf', {
        parentRefs: [parent('same-namespace')],
        rules: [{ filters, backendRefs }],
      }),
    ],
    http: { ...ALL_HTTP, backendHeaderModifiers },
  });
  const routes = (vsOf(r, `${INFRA}/same-namespace`)?.routes ?? []).filter(
    (x) => x.source === `HTTPRoute ${INFRA}/bf`,
  );
  const accepted = r.routes
    .get(`HTTPRoute ${INFRA}/bf`)
    ?.parents[0]?.conditions.find((c) => c.type === 'Accepted');
  return {
    r,
    routes,
    conditions: parentConditions(r, `${INFRA}/bf`)[0] ?? [],
    message: accepted?.message ?? '',
  };
}

describe("a backendRef's request header filters", () => {
  it('ride on their backend, after the route’s own, when it is picked; a single backend keeps them too', () => {
    const t = run(
      [
        backend('infra-backend-v1', 8080, { weight: 1, filters: [set('Backend', 'infra-backend-v1')] }),
        backend('infra-backend-v2', 8080, { weight: 1, filters: [set('Backend', 'infra-backend-v2')] }),
      ],
      true,
      [set('X-Route', 'r')],
    );
    assert.ok(t.conditions.includes('Accepted=True/Accepted'), t.conditions.join());
    const r = t.routes[0]!;
    assert.deepEqual(
      r.backends?.map((b) => [b.pool, b.requestHeaders?.set]),
      [
        [pool(INFRA, 'infra-backend-v1'), [{ name: 'Backend', value: 'infra-backend-v1' }]],
        [pool(INFRA, 'infra-backend-v2'), [{ name: 'Backend', value: 'infra-backend-v2' }]],
      ],
    );
    const vs = vsOf(t.r, `${INFRA}/same-namespace`)!;
    for (const [pick, want] of [
      [0.1, 'infra-backend-v1'],
      [0.9, 'infra-backend-v2'],
    ] as const) {
      const out = resolveRequest(vs, { host: 'x', path: '/' }, pick);
      assert.equal(out.upstream?.headers.backend, want);
      assert.equal(out.upstream?.headers['x-route'], 'r', 'the route’s own filter too');
    }
    const single = run([backend('infra-backend-v1', 8080, { filters: [set('X-One', '1')] })]);
    assert.equal(single.routes[0]!.backends?.length, 1);
    assert.equal(
      resolveRequest(vsOf(single.r, `${INFRA}/same-namespace`)!, { host: 'x', path: '/' }).upstream?.headers[
        'x-one'
      ],
      '1',
    );
  });

  it('refused by name: another filter type, a header value with a line break, a device without them', () => {
    const redirect = run([
      backend('infra-backend-v1', 8080, {
        filters: [{ type: 'RequestRedirect', requestRedirect: { statusCode: 302 } }],
      }),
    ]);
    assert.ok(redirect.conditions.includes('Accepted=False/UnsupportedValue'), redirect.conditions.join());
    assert.match(
      redirect.message,
      /backendRefs\[0\]\.filters\[0\]: filter type RequestRedirect on a backendRef is not supported/,
    );
    assert.equal(redirect.routes.length, 0, 'not served');
    const crlf = run([backend('infra-backend-v1', 8080, { filters: [set('X-A', 'a\r\nX-Injected: 1')] })]);
    assert.ok(crlf.conditions.includes('Accepted=False/UnsupportedValue'), crlf.conditions.join());
    assert.equal(crlf.routes.length, 0);
    const unable = run([backend('infra-backend-v1', 8080, { filters: [set('X-A', 'a')] })], false);
    assert.ok(unable.conditions.includes('Accepted=False/UnsupportedValue'));
    assert.match(unable.message, /backendRef filters are not supported by the memory load balancer/);
    assert.equal(unable.routes.length, 0);
  });
});
