/**
 * One HTTPRoute of rules (each its own path prefix to infra-backend-v1, plus what the rule adds)
 * through the Gateway pass, for the tests of a rule's pool variants (retry, sessionPersistence):
 * the route's served rules, its conditions, and the variants asked for by name; `refused` asserts
 * the whole route refused (Accepted False, UnsupportedValue) with a message matching `why`.
 */
import assert from 'node:assert/strict';
import type { HttpCapabilities } from '../../../src/adapter/contract.ts';
import { HAPROXY_CAPABILITIES } from '../../../adapters/haproxy/capabilities.ts';
import type { RouteRetry, SessionCookie } from '../../../src/model/types.ts';
import { backend, INFRA, parent, parentConditions, pass, route, vsOf } from './gateway-support.ts';

export const HAPROXY_HTTP: HttpCapabilities = HAPROXY_CAPABILITIES.http!;

export const rulesRoute = (rules: Record<string, unknown>[]) =>
  route(INFRA, 'r', {
    parentRefs: [parent('same-namespace')],
    rules: rules.map((r, i) => ({
      matches: [{ path: { type: 'PathPrefix', value: `/p${i}` } }],
      backendRefs: [backend('infra-backend-v1', 8080)],
      ...r,
    })),
  });

export function runRules(rules: Record<string, unknown>[], http = HAPROXY_HTTP) {
  const retryPools = new Map<string, RouteRetry>();
  const sessionPools = new Map<string, SessionCookie>();
  const r = pass({ routes: [rulesRoute(rules)], http, retryPools, sessionPools });
  const routes = (vsOf(r, `${INFRA}/same-namespace`)?.routes ?? []).filter(
    (x) => x.source === `HTTPRoute ${INFRA}/r`,
  );
  const conditions = r.routes.get(`HTTPRoute ${INFRA}/r`)?.parents[0]?.conditions ?? [];
  return { routes, retryPools, sessionPools, conditions, flat: parentConditions(r, `${INFRA}/r`)[0] ?? [] };
}

export function refusedRules(rules: Record<string, unknown>[], why: RegExp, http = HAPROXY_HTTP): void {
  const { routes, conditions, flat } = runRules(rules, http);
  assert.equal(routes.length, 0, 'nothing of it served');
  assert.ok(flat.includes('Accepted=False/UnsupportedValue'), JSON.stringify(flat));
  assert.match(conditions.find((c) => c.type === 'Accepted')!.message, why);
}
