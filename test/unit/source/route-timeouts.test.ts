/**
 * HTTPRoute rule `timeouts` (issue 33: the Gateway API's own timeouts on the same model): read as
 * the Gateway API's Duration, the shorter of request and backendRequest as the route's backend
 * timeout, 0s lifting it; an unreadable value refuses the route naming it; a load balancer without
 * route timeouts refuses the route (never drops the timeout); HAProxy's frontend sets the route's
 * timeout in a variable and each HTTP backend applies it (`http-request set-timeout server`); the
 * Data Plane transport writes the same as the API's objects (a backend http_request_rule).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { aviCapabilities } from '../../../adapters/avi/capabilities.ts';
import { DATAPLANE_CAPABILITIES } from '../../../adapters/haproxy/capabilities.ts';
import { backendFor, backendRequestRulesFor } from '../../../adapters/haproxy/dataplane/layout.ts';
import { httpRuleLine as dpRuleLine } from '../../../sim/haproxy-dataplane/rule-lines.ts';

const DP_LAYOUT = {
  owner: 'c1',
  apiVersion: 'v3' as const,
  slots: 4,
  healthChecks: true,
  transparentBinds: false,
};
import { renderConfig } from '../../../adapters/haproxy/config.ts';
import { gatewayRules, httpRuleLine, ROUTE_TIMEOUT_VAR } from '../../../adapters/haproxy/http-routes.ts';
import type { HttpCapabilities } from '../../../src/adapter/contract.ts';
import { ALL_HTTP } from '../../../src/adapter/http-capabilities.ts';
import { durationMs } from '../../../src/source/gateway/durations.ts';
import * as kit from '../../support/model.ts';
import { backend, INFRA, parent, parentConditions, pass, route, vsOf } from './gateway-support.ts';

const withTimeouts = (timeouts: Record<string, unknown>) =>
  route(INFRA, 't', {
    parentRefs: [parent('same-namespace')],
    rules: [{ backendRefs: [backend('infra-backend-v1', 8080, { namespace: INFRA })], timeouts }],
  });

const served = (
  timeouts: Record<string, unknown>,
  http: HttpCapabilities = { ...ALL_HTTP, timeouts: true },
) => {
  const r = pass({ routes: [withTimeouts(timeouts)], http });
  return {
    r,
    routes: (vsOf(r, `${INFRA}/same-namespace`)?.routes ?? []).filter(
      (x) => x.source === `HTTPRoute ${INFRA}/t`,
    ),
  };
};

describe('HTTPRoute timeouts', () => {
  it('reads the Gateway API Duration', () => {
    assert.equal(durationMs('500ms'), 500);
    assert.equal(durationMs('1h2m3s4ms'), 3_723_004);
    assert.equal(durationMs('0s'), 0);
    for (const bad of ['', '1', '1.5s', '-1s', '1d', '1s1s1s1s1s', '100000s'])
      assert.equal(durationMs(bad), undefined, bad);
  });

  it('the shorter of request and backendRequest; 0s lifts the limit; bad values refused by name', () => {
    assert.equal(served({ request: '10s', backendRequest: '5s' }).routes[0]!.timeoutMs, 5000);
    assert.equal(served({ backendRequest: '500ms' }).routes[0]!.timeoutMs, 500);
    assert.equal(served({ request: '0s' }).routes[0]!.timeoutMs, 0);
    assert.equal(served({ request: '0s', backendRequest: '2s' }).routes[0]!.timeoutMs, 2000);
    const bad = served({ request: 'soon' });
    assert.equal(bad.routes.length, 0);
    assert.match(JSON.stringify(parentConditions(bad.r, `${INFRA}/t`)), /Accepted=False\/UnsupportedValue/);
  });

  it('a load balancer without route timeouts refuses the route, naming them', () => {
    const avi = aviCapabilities(false).http!;
    const { r, routes } = served({ request: '1s' }, avi);
    assert.equal(routes.length, 0);
    const st = r.routes.get(`HTTPRoute ${INFRA}/t`)!.parents[0]!.conditions;
    assert.ok(
      st.some((c) => !c.status && /request timeouts/.test(c.message)),
      JSON.stringify(st),
    );
  });

  it('HAProxy: the frontend sets the route timeout, every HTTP backend applies it, on both transports', () => {
    const vs = vsOf(served({ request: '750ms' }).r, `${INFRA}/same-namespace`)!;
    const line = gatewayRules(vs)
      .request.map((x) => httpRuleLine('request', x))
      .find((l) => l.includes(ROUTE_TIMEOUT_VAR));
    assert.match(line ?? '', /^http-request set-var\(txn\.npl_timeout\) int\(750\) if is_r\d+$/);
    const lifted = vsOf(served({ request: '0s' }).r, `${INFRA}/same-namespace`)!;
    assert.ok(
      gatewayRules(lifted).request.some((x) => httpRuleLine('request', x).includes('int(86400000)')),
      '0s: a day',
    );
    // HAProxy 2.6 sets a server timeout only in a backend: each HTTP backend reads the variable.
    const poolName = vs.routes.find((x) => x.pool)!.pool;
    const cfg = renderConfig([kit.pool(poolName, [], { health: 'http' })], [vs], [], {
      owner: 'c1',
      adminSocket: '/x',
    });
    const backend = cfg.slice(cfg.indexOf(`backend ${poolName}\n`));
    assert.ok(backend.length < cfg.length, 'the pool is rendered');
    assert.match(
      backend,
      /^ {4}http-request set-timeout server var\(txn\.npl_timeout\) if \{ var\(txn\.npl_timeout\) -m found \}$/m,
    );
    // The Data Plane transport: the same set-var in the frontend's http_request_rules (the
    // route layout the two share), and a set-timeout rule in every HTTP backend's, as the API's
    // objects; the simulator (written from the http_request_rule model) renders that line.
    assert.equal(DATAPLANE_CAPABILITIES.http!.timeouts, true);
    assert.equal(served({ request: '1s' }, DATAPLANE_CAPABILITIES.http!).routes[0]!.timeoutMs, 1000);
    const p = kit.pool(poolName, [], { health: 'http' });
    const [rule] = backendRequestRulesFor(p, true);
    assert.equal(
      dpRuleLine('request', rule!),
      'http-request set-timeout server var(txn.npl_timeout) if { var(txn.npl_timeout) -m found }',
    );
    assert.deepEqual(backendRequestRulesFor(p, false), [], 'a TCP backend has none');
    assert.match(backendFor(p, true, DP_LAYOUT).description ?? '', / rules=timeout$/);
  });
});
