/**
 * An HTTPRoute rule's `retry` (GEP-1731, the experimental channel's HTTPRoute): its backends'
 * pools are variants of their own (retryPoolName: a rule without retries, or with others, never
 * shares one), carrying the statuses and attempts (Pool.retryStatuses, retries); a value the load
 * balancer cannot carry refuses the route naming the field, never dropped; a load balancer that
 * does not retry by route refuses it (BIG-IP and Avi do, each within its own limits). HAProxy writes `retry-on` and `retries` on the
 * variant's backend (both transports) and reads them back from those fields, a hand edit seen.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { aviCapabilities } from '../../../adapters/avi/capabilities.ts';
import { F5_CAPABILITIES } from '../../../adapters/f5/capabilities.ts';
import { HAPROXY_CAPABILITIES } from '../../../adapters/haproxy/capabilities.ts';
import { backendFor } from '../../../adapters/haproxy/dataplane/layout.ts';
import { readDataplanePolicy } from '../../../adapters/haproxy/dataplane/policy-read.ts';
import { retryOn, timeoutLines } from '../../../adapters/haproxy/policy-lines.ts';
import { readBackendPolicy } from '../../../adapters/haproxy/policy-read.ts';
import { capabilityProblem } from '../../../src/adapter/preflight.ts';
import { parseControllerConfig } from '../../../src/config/controller-config.ts';
import { isIPv6Name, retryPoolName } from '../../../src/model/names.ts';
import type { Pool } from '../../../src/model/types.ts';
import { buildDesired, type ClusterView } from '../../../src/source/desired.ts';
import { backend, baseView, INFRA, parent, pass, pool, route, vsOf } from './gateway-support.ts';
import { refusedRules, rulesRoute, runRules } from './rule-variants-harness.ts';

const HAPROXY_HTTP = HAPROXY_CAPABILITIES.http!;

describe('HTTPRoute retry', () => {
  it("a rule's retries send its backends to a variant pool of their own; rules asking the same share it", () => {
    const retry = { codes: [502, 500, 500], attempts: 3 };
    const { routes, retryPools, flat } = runRules([{ retry }, {}, { retry }, { retry: { attempts: 2 } }]);
    assert.deepEqual(flat, ['Accepted=True/Accepted', 'ResolvedRefs=True/ResolvedRefs']);
    const plain = pool(INFRA, 'infra-backend-v1');
    const same = retryPoolName(plain, { statuses: [500, 502], attempts: 3 });
    const other = retryPoolName(plain, { statuses: [], attempts: 2 });
    assert.deepEqual(
      routes.map((x) => [x.path, x.pool]),
      [
        ['/p0', same],
        ['/p1', plain],
        ['/p2', same],
        ['/p3', other],
      ],
    );
    // Statuses read once each, in order; no codes: connection errors alone.
    assert.deepEqual(retryPools.get(same), { statuses: [500, 502], attempts: 3 });
    assert.deepEqual(retryPools.get(other), { statuses: [], attempts: 2 });
    assert.notEqual(same, other);
  });

  it('variant names: length-limited, hashed by what is asked, an IPv6 pool keeps its suffix last', () => {
    const long = `c1--${'n'.repeat(40)}-${'s'.repeat(40)}-8080.l7`;
    const a = retryPoolName(long, { statuses: [500] });
    assert.ok(a.length <= 63 && /\.retry-[0-9a-f]{8}$/.test(a), a);
    assert.ok(retryPoolName(`${long}_v6`, { statuses: [500] }).length <= 63);
    assert.notEqual(a, retryPoolName(long, { statuses: [500], attempts: 1 }));
    assert.notEqual(a, retryPoolName(long, { statuses: [503] }));
    const v6 = retryPoolName('c1--ns-svc-8080.l7_v6', { statuses: [500] });
    assert.ok(isIPv6Name(v6) && v6.startsWith('c1--ns-svc-8080.l7.retry-'), v6);
    assert.ok(!isIPv6Name(retryPoolName('c1--ns-svc-8080.l7', { statuses: [500] })));
  });

  it('bad input is refused for that route alone, naming the field: never served without it', () => {
    refusedRules([{ retry: { codes: [418] } }], /retry\.codes\[0\].*retries on 401, .*504 only, not 418/);
    refusedRules([{ retry: { codes: [600] } }], /retry\.codes\[0\]: 600 is not a status of 400-599/);
    refusedRules([{ retry: { codes: ['500'] } }], /retry\.codes\[0\]: "500" is not a status/);
    refusedRules([{ retry: { codes: Array(17).fill(500) } }], /retry\.codes: a list of at most 16/);
    refusedRules([{ retry: { attempts: 0 } }], /retry\.attempts: 0 is not a count of 1 or more/);
    refusedRules([{ retry: { attempts: 2.5 } }], /retry\.attempts: 2\.5 is not a count/);
    refusedRules(
      [{ retry: { attempts: 11 } }],
      /retry\.attempts: the memory load balancer takes at most 10, not 11/,
    );
    refusedRules(
      [{ retry: { attempts: 2, backoff: '100ms' } }],
      /retry\.backoff: .* cannot wait between attempts/,
    );
    refusedRules(
      [{ retry: { codes: [500] }, timeouts: { request: '1s' } }],
      /with timeouts\.request.*cannot hold the attempts/,
    );
    refusedRules([{ retry: { codes: [500], perTry: '1s' } }], /retry\.perTry: not supported by npl-lb yet/);
    // The rule's own backend timeout bounds each attempt: served.
    const each = runRules([
      { retry: { codes: [500] }, timeouts: { backendRequest: '200ms', request: '0s' } },
    ]);
    assert.equal(each.routes.length, 1);
    assert.equal(each.routes[0]!.timeoutMs, 200);
    // Another route beside a refused one is served.
    const r = pass({
      routes: [
        rulesRoute([{ retry: { codes: [418] } }]),
        route(INFRA, 'beside', {
          parentRefs: [parent('same-namespace')],
          rules: [{ backendRefs: [backend('infra-backend-v1', 8080)] }],
        }),
      ],
      http: HAPROXY_HTTP,
    });
    assert.equal(
      vsOf(r, `${INFRA}/same-namespace`)!.routes.filter((x) => x.source === `HTTPRoute ${INFRA}/beside`)
        .length,
      1,
    );
  });

  it('a load balancer that does not retry by route refuses the rule by name; BIG-IP takes any status, Avi asks one', () => {
    const f5 = F5_CAPABILITIES.http!;
    const none = { ...f5, retry: undefined };
    refusedRules([{ retry: { codes: [500], attempts: 2 } }], /does not retry requests by route/, none);
    const big = runRules([{ retry: { codes: [429, 503], attempts: 10 } }], f5);
    assert.deepEqual([...big.retryPools.values()], [{ statuses: [429, 503], attempts: 10 }]);
    refusedRules([{ retry: { codes: [500], attempts: 11 } }], /takes at most 10, not 11/, f5);
    refusedRules([{ retry: { codes: [500], backoff: '100ms' } }], /retry\.backoff: .* at once/, f5);
    const avi = aviCapabilities(false).http!;
    const served = runRules([{ retry: { codes: [418, 503], attempts: 5 } }], avi);
    assert.equal(served.routes.length, 1);
    assert.deepEqual([...served.retryPools.values()], [{ statuses: [418, 503], attempts: 5 }]);
    refusedRules(
      [{ retry: { attempts: 2 } }],
      /retry\.codes: .* retries a request on the statuses a rule names/,
      avi,
    );
    refusedRules([{ retry: { codes: [500], attempts: 6 } }], /takes at most 5, not 6/, avi);
  });

  it('through the whole pass on HAProxy: the variant pool carries the statuses and attempts over the BackendPolicy count; removed, it goes', () => {
    const cfg = parseControllerConfig('clusterName: c1\nvip: {cidrs: [192.0.2.0/28]}\n');
    const lb = { name: 'haproxy', caps: HAPROXY_CAPABILITIES };
    const view = (rules: Record<string, unknown>[]): ClusterView =>
      baseView({
        httpRoutes: [rulesRoute(rules)],
      });
    const plain = pool(INFRA, 'infra-backend-v1');
    const variant = retryPoolName(plain, { statuses: [503], attempts: 4 });
    const first = buildDesired(view([{ retry: { codes: [503], attempts: 4 } }, {}]), cfg, lb).state;
    const v = first.pools.find((p) => p.name === variant);
    assert.ok(v, first.pools.map((p) => p.name).join(' '));
    assert.deepEqual(
      [v.retryStatuses, v.retries, v.health, v.service],
      [[503], 4, 'http', `${INFRA}/infra-backend-v1`],
    );
    const base = first.pools.find((p) => p.name === plain)!;
    assert.equal(base.retryStatuses, undefined);
    // Without attempts: the statuses alone, the device's count.
    const noCount = buildDesired(view([{ retry: { codes: [500] } }]), cfg, lb).state;
    const n = noCount.pools.find((p) => p.name === retryPoolName(plain, { statuses: [500] }))!;
    assert.deepEqual([n.retryStatuses, n.retries], [[500], undefined]);
    // The base pool asked by nothing but the variant is not on the device.
    const alone = buildDesired(view([{ retry: { codes: [503], attempts: 4 } }]), cfg, lb).state;
    assert.deepEqual(
      alone.pools.filter((p) => p.service === `${INFRA}/infra-backend-v1`).map((p) => p.name),
      [variant],
    );
    // The retry taken off: the variant is no longer asked for.
    const after = buildDesired(view([{}, {}]), cfg, lb).state;
    assert.ok(!after.pools.some((p) => p.name.includes('.retry-')));
  });
});

describe('HAProxy: a route retry on the backend, both transports', () => {
  const p = { name: 'b', retries: 3, retryStatuses: [500, 502] } as Pool;

  it('writes retry-on with connection failures and the statuses, and retries', () => {
    assert.deepEqual(timeoutLines(p), ['    retries 3', '    retry-on conn-failure empty-response 500 502']);
    assert.deepEqual(
      timeoutLines({ ...p, retryStatuses: [] }).at(-1),
      '    retry-on conn-failure empty-response',
    );
    assert.equal(retryOn([504]), 'conn-failure empty-response 504');
  });

  it('runtime: read back from the lines; a line edited by hand is seen and read as not ours', () => {
    const lines = (retryLine: string) => ['    balance roundrobin', '    retries 3', retryLine];
    const back = readBackendPolicy('b', lines('    retry-on conn-failure empty-response 500 502'), [], {});
    assert.deepEqual([back.policy.retryStatuses, back.policy.retries, back.exact], [[500, 502], 3, true]);
    const edited = readBackendPolicy('b', lines('    retry-on all-retryable-errors'), [], {});
    assert.deepEqual([edited.policy.retryStatuses, edited.exact], [[], false]);
    const gone = readBackendPolicy('b', ['    balance roundrobin', '    retries 3'], [], {});
    assert.equal(gone.policy.retryStatuses, undefined);
  });

  it('every adapter refuses, by name and terminal, a pool whose retries it cannot make (preflight)', () => {
    const desired = {
      ...p,
      protocol: 'TCP',
      health: 'http',
      members: [],
      service: 'ns/s',
      servicePort: '80',
    } as Pool;
    const change = (d: Pool) => ({ op: 'create' as const, kind: 'pool' as const, name: 'b', desired: d });
    const without = { ...F5_CAPABILITIES, http: { ...F5_CAPABILITIES.http!, retry: undefined } };
    const other = capabilityProblem(change(desired), without, 'other');
    assert.deepEqual([other?.code, other?.terminal], ['Unsupported', true]);
    assert.match(other!.message, /a route's retries are not made by the other adapter/);
    for (const caps of [HAPROXY_CAPABILITIES, aviCapabilities(false), F5_CAPABILITIES])
      assert.equal(capabilityProblem(change(desired), caps, 'x'), undefined);
    // Avi retries on statuses it is given: connection failures alone are not a pool field there.
    const none = capabilityProblem(change({ ...desired, retryStatuses: [] }), aviCapabilities(false), 'avi');
    assert.match(none!.message, /a route's retries are not made by the avi adapter/);
    const teapot = capabilityProblem(
      change({ ...desired, retryStatuses: [418] }),
      HAPROXY_CAPABILITIES,
      'haproxy',
    );
    assert.match(teapot!.message, /retries on 418 are not made by the haproxy adapter/);
  });

  it('Data Plane: the backend retry_on field, read back from it; a hand edit seen', () => {
    const pool: Pool = {
      ...p,
      protocol: 'TCP',
      health: 'http',
      members: [],
      service: 'ns/s',
      servicePort: '8080',
    };
    const b = backendFor(pool, true, {
      owner: 'c1',
      apiVersion: 'v3',
      slots: 2,
      healthChecks: true,
      transparentBinds: false,
    });
    assert.equal(b.retry_on, 'conn-failure empty-response 500 502');
    assert.equal(b.retries, 3);
    const back = readDataplanePolicy(b, [], {});
    assert.deepEqual([back.policy.retryStatuses, back.exact], [[500, 502], true]);
    const edited = readDataplanePolicy({ ...b, retry_on: 'conn-failure' }, [], {});
    assert.deepEqual([edited.policy.retryStatuses, edited.exact], [[], false]);
  });
});
