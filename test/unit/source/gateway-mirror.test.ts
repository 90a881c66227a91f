/**
 * Issue 48, item 5: the RequestMirror filter of an HTTPRoute (HTTPRouteRequestMirror,
 * …MultipleMirrors, …PercentageMirror). Where the load balancer declares mirrors, each filter's
 * Service resolves as a backendRef does (its pool, the Service auto-annotated) and its share is
 * carried as a fraction (a percent over 100; all of them is no share); a mirror whose Service does
 * not resolve is left out and said on ResolvedRefs (the route still served), as the spec asks; a
 * hostile share (both percent and fraction, out of range, a zero denominator) or more mirrors than
 * the device copies to refuses that route alone by name; a load balancer that does not mirror
 * refuses the route naming the filter, never serving it unmirrored; a GRPCRoute's mirror is refused.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ALL_HTTP } from '../../../src/adapter/http-capabilities.ts';
import { parseControllerConfig } from '../../../src/config/controller-config.ts';
import { servicesToAnnotate } from '../../../src/source/annotated-services.ts';
import {
  backend,
  baseView,
  grant,
  grpcRoute,
  INFRA,
  parent,
  pass,
  pool,
  route,
  vsOf,
  WEB,
} from './gateway-support.ts';

const MIRRORING = { ...ALL_HTTP, mirror: { maxPerRoute: 2 } };

function run(mirrors: Record<string, unknown>[], http: typeof ALL_HTTP = MIRRORING, grants = false) {
  const rule = (name: string, m: Record<string, unknown>[]) =>
    route(INFRA, name, {
      parentRefs: [parent('same-namespace')],
      rules: [
        {
          matches: [{ path: { type: 'PathPrefix', value: `/${name}` } }],
          filters: [
            { type: 'RequestHeaderModifier', requestHeaderModifier: { set: [{ name: 'X-A', value: '1' }] } },
            ...m.map((requestMirror) => ({ type: 'RequestMirror', requestMirror })),
          ],
          backendRefs: [backend('infra-backend-v1', 8080)],
        },
      ],
    });
  // Beside it, a route without mirrors: a refusal of the first never touches it.
  const r = pass({
    routes: [rule('mirror', mirrors), rule('plain', [])],
    http,
    ...(grants ? { grants: [grant(WEB, 'HTTPRoute', INFRA, 'Service')] } : {}),
  });
  const vs = vsOf(r, `${INFRA}/same-namespace`);
  const cond = (name: string, type: string) =>
    r.routes.get(`HTTPRoute ${INFRA}/${name}`)?.parents[0]?.conditions.find((c) => c.type === type);
  const mirrorRoute = vs?.routes.find((x) => x.source === `HTTPRoute ${INFRA}/mirror`);
  return { r, vs, cond, mirrorRoute };
}

const to = (name: string, extra: Record<string, unknown> = {}) => ({
  backendRef: { name, port: 8080, ...extra },
});

describe('the RequestMirror filter', () => {
  it('copies to the Service as a backendRef resolves it, every request or a share', () => {
    const { cond, mirrorRoute, r } = run([
      to('infra-backend-v2'),
      { ...to('infra-backend-v3'), percent: 20 },
    ]);
    assert.equal(cond('mirror', 'Accepted')?.status, true);
    assert.equal(cond('mirror', 'ResolvedRefs')?.status, true);
    assert.deepEqual(mirrorRoute?.mirrors, [
      { pool: pool(INFRA, 'infra-backend-v2') },
      { pool: pool(INFRA, 'infra-backend-v3'), share: { numerator: 20, denominator: 100 } },
    ]);
    assert.deepEqual(mirrorRoute?.requestHeaders?.set, [{ name: 'X-A', value: '1' }]);
    assert.ok(
      r.backends.has(`${INFRA}/infra-backend-v2`),
      "the mirror's Service is annotated for NodePortLocal",
    );
  });

  it('carries a fraction as it is, and 100 percent or a whole fraction as no share', () => {
    assert.deepEqual(
      run([{ ...to('infra-backend-v2'), fraction: { numerator: 25, denominator: 50 } }]).mirrorRoute?.mirrors,
      [{ pool: pool(INFRA, 'infra-backend-v2'), share: { numerator: 25, denominator: 50 } }],
    );
    for (const whole of [{ percent: 100 }, { fraction: { numerator: 7, denominator: 7 } }])
      assert.deepEqual(run([{ ...to('infra-backend-v2'), ...whole }]).mirrorRoute?.mirrors, [
        { pool: pool(INFRA, 'infra-backend-v2') },
      ]);
  });

  it('leaves out a mirror that does not resolve and says why; the route is still served', () => {
    for (const [ref, reason] of [
      [to('missing'), 'BackendNotFound'],
      [to('infra-backend-v2', { kind: 'ConfigMap', group: '' }), 'InvalidKind'],
      [to('web-backend', { namespace: WEB }), 'RefNotPermitted'],
    ] as const) {
      const { cond, mirrorRoute } = run([ref]);
      assert.equal(cond('mirror', 'Accepted')?.status, true, reason);
      assert.equal(cond('mirror', 'ResolvedRefs')?.reason, reason);
      assert.match(
        String(cond('mirror', 'ResolvedRefs')?.message),
        /filters\[1\]\.requestMirror\.backendRef/,
      );
      assert.equal(mirrorRoute?.mirrors, undefined, `${reason}: not mirrored`);
      assert.equal(mirrorRoute?.pool, pool(INFRA, 'infra-backend-v1'), `${reason}: still forwarded`);
    }
    // Granted, the other namespace's Service is a mirror like any.
    const granted = run([to('web-backend', { namespace: WEB })], MIRRORING, true);
    assert.deepEqual(granted.mirrorRoute?.mirrors, [{ pool: pool(WEB, 'web-backend') }]);
  });

  it('refuses a hostile share, or more mirrors than the device copies to, for that route alone', () => {
    for (const [m, why] of [
      [[{ ...to('infra-backend-v2'), percent: 20, fraction: { numerator: 1, denominator: 2 } }], /exclusive/],
      [[{ ...to('infra-backend-v2'), percent: 101 }], /percent 101/],
      [[{ ...to('infra-backend-v2'), percent: -1 }], /percent -1/],
      [[{ ...to('infra-backend-v2'), fraction: { numerator: 1, denominator: 0 } }], /fraction 1\/0/],
      [[{ ...to('infra-backend-v2'), fraction: { numerator: 3, denominator: 2 } }], /fraction 3\/2/],
      [[to('infra-backend-v2'), to('infra-backend-v3'), to('infra-backend-v1')], /at most 2 backends/],
    ] as const) {
      const { cond, vs } = run([...m]);
      assert.equal(cond('mirror', 'Accepted')?.status, false);
      assert.equal(cond('mirror', 'Accepted')?.reason, 'UnsupportedValue');
      assert.match(String(cond('mirror', 'Accepted')?.message), why);
      assert.equal(cond('plain', 'Accepted')?.status, true, 'the other route is served');
      assert.ok(vs?.routes.some((x) => x.source === `HTTPRoute ${INFRA}/plain`));
    }
  });

  it('is refused by name where the load balancer does not mirror, and on a GRPCRoute', () => {
    const { cond, mirrorRoute } = run([to('infra-backend-v2')], ALL_HTTP);
    assert.equal(cond('mirror', 'Accepted')?.status, false);
    assert.match(
      String(cond('mirror', 'Accepted')?.message),
      /RequestMirror is not supported by the memory load balancer/,
    );
    assert.equal(mirrorRoute, undefined, 'never served unmirrored');
    const g = pass({
      grpcRoutes: [
        grpcRoute(INFRA, 'grpc', {
          parentRefs: [parent('same-namespace')],
          rules: [
            {
              filters: [{ type: 'RequestMirror', requestMirror: to('infra-backend-v2') }],
              backendRefs: [backend('infra-backend-v1', 8080)],
            },
          ],
        }),
      ],
      support: { http2: true },
      http: { ...MIRRORING, http2: true },
    });
    const accepted = g.routes
      .get(`GRPCRoute ${INFRA}/grpc`)
      ?.parents[0]?.conditions.find((c) => c.type === 'Accepted');
    assert.equal(accepted?.status, false);
    assert.match(String(accepted?.message), /filter type RequestMirror is not supported/);
  });

  it("annotates the mirror's Service for NodePortLocal (its pool has members), a permitted one only", () => {
    const view = (grants: boolean) =>
      baseView({
        httpRoutes: [
          route(INFRA, 'mirror', {
            parentRefs: [parent('same-namespace')],
            rules: [
              {
                filters: [
                  { type: 'RequestMirror', requestMirror: to('infra-backend-v2') },
                  { type: 'RequestMirror', requestMirror: to('web-backend', { namespace: WEB }) },
                ],
                backendRefs: [backend('infra-backend-v1', 8080)],
              },
            ],
          }),
        ],
        referenceGrants: grants ? [grant(WEB, 'HTTPRoute', INFRA, 'Service')] : [],
      });
    const cfg = parseControllerConfig('clusterName: c1\nvip: {cidrs: [192.0.2.0/28]}\n');
    assert.deepEqual(
      [...servicesToAnnotate(view(false), cfg)].sort(),
      [`${INFRA}/infra-backend-v1`, `${INFRA}/infra-backend-v2`],
      'another namespace without a ReferenceGrant is not annotated',
    );
    assert.ok(servicesToAnnotate(view(true), cfg).has(`${WEB}/web-backend`));
  });
});
