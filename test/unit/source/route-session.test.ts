/**
 * An HTTPRoute rule's `sessionPersistence` (GEP-1619, the experimental channel's HTTPRoute): its
 * backends' pools are variants of their own (sessionPoolName, after a retry variant's), carrying
 * the cookie's name and lifetime (Pool.sessionCookie, with persistence Cookie); a value the load
 * balancer cannot carry refuses the route naming the field, never dropped; a load balancer that
 * keeps no sessions by route refuses it, and one that keeps some refuses what it cannot (Avi a
 * lifetime not in minutes, BIG-IP a Session cookie), as preflight does. HAProxy writes the
 * variant's `cookie` line (both transports) and reads it back from that line, a hand edit seen.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { aviCapabilities } from '../../../adapters/avi/capabilities.ts';
import { F5_CAPABILITIES } from '../../../adapters/f5/capabilities.ts';
import { HAPROXY_CAPABILITIES } from '../../../adapters/haproxy/capabilities.ts';
import { backendFor } from '../../../adapters/haproxy/dataplane/layout.ts';
import { readDataplanePolicy } from '../../../adapters/haproxy/dataplane/policy-read.ts';
import { balanceLines, poolShape } from '../../../adapters/haproxy/policy-lines.ts';
import { readBackendPolicy } from '../../../adapters/haproxy/policy-read.ts';
import { capabilityProblem } from '../../../src/adapter/preflight.ts';
import { parseControllerConfig } from '../../../src/config/controller-config.ts';
import { isIPv6Name, retryPoolName, sessionPoolName } from '../../../src/model/names.ts';
import { persistenceCookie } from '../../../src/model/persistence.ts';
import type { Pool } from '../../../src/model/types.ts';
import { buildDesired, type ClusterView } from '../../../src/source/desired.ts';
import { backend, baseView, INFRA, parent, pass, pool, route, vsOf } from './gateway-support.ts';
import { refusedRules, rulesRoute, runRules } from './rule-variants-harness.ts';

const HAPROXY_HTTP = HAPROXY_CAPABILITIES.http!;

describe('HTTPRoute sessionPersistence', () => {
  it("a rule's session cookie sends its backends to a variant pool of their own; rules asking the same share it", () => {
    const named = { sessionName: 'shop-session', absoluteTimeout: '1h30s' };
    const { routes, sessionPools, flat } = runRules([
      { sessionPersistence: named },
      {},
      { sessionPersistence: named },
      { sessionPersistence: { cookieConfig: { lifetimeType: 'Permanent' }, absoluteTimeout: '1500ms' } },
      { sessionPersistence: {}, retry: { codes: [503] } },
    ]);
    assert.deepEqual(flat, ['Accepted=True/Accepted', 'ResolvedRefs=True/ResolvedRefs']);
    const plain = pool(INFRA, 'infra-backend-v1');
    const same = sessionPoolName(plain, { name: 'shop-session', absoluteSeconds: 3630 });
    const permanent = sessionPoolName(plain, { absoluteSeconds: 2, permanent: true });
    const both = sessionPoolName(retryPoolName(plain, { statuses: [503] }), {});
    assert.deepEqual(
      routes.map((x) => [x.path, x.pool]),
      [
        ['/p0', same],
        ['/p1', plain],
        ['/p2', same],
        ['/p3', permanent],
        ['/p4', both],
      ],
    );
    // Seconds rounded up (1.5 s: 2), never shorter than asked.
    assert.deepEqual(sessionPools.get(same), { name: 'shop-session', absoluteSeconds: 3630 });
    assert.deepEqual(sessionPools.get(permanent), { absoluteSeconds: 2, permanent: true });
    assert.deepEqual(sessionPools.get(both), {});
    // The retry variant's name is cut to fit (a hash of it kept): still its own pool.
    assert.ok(/\.session-[0-9a-f]{8}$/.test(both) && both !== sessionPoolName(plain, {}), both);
  });

  it('variant names: length-limited, hashed by what is asked, an IPv6 pool keeps its suffix last', () => {
    const long = `c1--${'n'.repeat(40)}-${'s'.repeat(40)}-8080.l7`;
    const a = sessionPoolName(long, { name: 'x' });
    assert.ok(a.length <= 63 && /\.session-[0-9a-f]{8}$/.test(a), a);
    assert.notEqual(a, sessionPoolName(long, { name: 'y' }));
    const v6 = sessionPoolName('c1--ns-svc-8080.l7_v6', {});
    assert.ok(isIPv6Name(v6) && v6.startsWith('c1--ns-svc-8080.l7.session-'), v6);
  });

  it('bad input is refused for that route alone, naming the field: never served without it', () => {
    refusedRules(
      [{ sessionPersistence: { type: 'Header' } }],
      /sessionPersistence\.type: "Header".*by cookie only/,
    );
    refusedRules(
      [{ sessionPersistence: { sessionName: 'a b' } }],
      /sessionPersistence\.sessionName: "a b" is not a cookie name npl-lb writes/,
    );
    refusedRules(
      [{ sessionPersistence: { sessionName: 'x"; attr "Domain=evil' } }],
      /sessionName: .* is not a cookie name/,
    );
    refusedRules([{ sessionPersistence: { sessionName: '#comment' } }], /sessionName/);
    refusedRules(
      [{ sessionPersistence: { sessionName: 'npllb_0123456789ab' } }],
      /sessionName: names beginning npllb_ are the load balancer's own/,
    );
    refusedRules(
      [{ sessionPersistence: { absoluteTimeout: '0s' } }],
      /absoluteTimeout: "0s" is not a duration of more than 0s/,
    );
    refusedRules(
      [{ sessionPersistence: { absoluteTimeout: '1d' } }],
      /absoluteTimeout: "1d" is not a duration/,
    );
    refusedRules(
      [{ sessionPersistence: { cookieConfig: { lifetimeType: 'Permanent' } } }],
      /a Permanent cookie needs absoluteTimeout/,
    );
    refusedRules(
      [{ sessionPersistence: { cookieConfig: { lifetimeType: 'Forever' } } }],
      /lifetimeType: "Forever" is not Session or Permanent/,
    );
    refusedRules(
      [{ sessionPersistence: { idleTimeout: '1m' } }],
      /sessionPersistence\.idleTimeout: not supported by npl-lb yet/,
    );
    refusedRules(
      [{ sessionPersistence: { cookieConfig: { path: '/' } } }],
      /cookieConfig\.path: not supported by npl-lb yet/,
    );
    // Another route beside a refused one is served.
    const r = pass({
      routes: [
        rulesRoute([{ sessionPersistence: { type: 'Header' } }]),
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

  it('a load balancer that keeps no sessions by route refuses the rule by name; one that keeps some, what it cannot (Avi: minutes, Permanent to end one; BIG-IP: no Session cookie)', () => {
    const none = { ...HAPROXY_HTTP, sessionCookie: undefined };
    refusedRules([{ sessionPersistence: { sessionName: 's' } }], /does not keep sessions by route/, none);
    // Avi: a lifetime in whole minutes up to 10 days, ended only through a Permanent cookie.
    const avi = aviCapabilities(false).http!;
    const permanent = { cookieConfig: { lifetimeType: 'Permanent' } };
    refusedRules(
      [{ sessionPersistence: { ...permanent, absoluteTimeout: '90s' } }],
      /absoluteTimeout: "90s": the \w+ load balancer counts a session's lifetime in steps of 60s/,
      avi,
    );
    refusedRules(
      [{ sessionPersistence: { ...permanent, absoluteTimeout: '241h' } }],
      /absoluteTimeout: "241h": the \w+ load balancer keeps a session at most 864000s/,
      avi,
    );
    refusedRules(
      [{ sessionPersistence: { sessionName: 's', absoluteTimeout: '1h' } }],
      /absoluteTimeout: the \w+ load balancer ends a session after a time only with a Permanent cookie/,
      avi,
    );
    const kept = runRules(
      [
        { sessionPersistence: { ...permanent, absoluteTimeout: '240h' } },
        { sessionPersistence: { sessionName: 'browser' } },
      ],
      avi,
    );
    assert.deepEqual(kept.flat, ['Accepted=True/Accepted', 'ResolvedRefs=True/ResolvedRefs']);
    assert.deepEqual(
      [...kept.sessionPools.values()],
      [{ absoluteSeconds: 864_000, permanent: true }, { name: 'browser' }],
    );
    // BIG-IP's policy cookie always carries an expiry: the default lifetime (Session) is refused.
    refusedRules(
      [{ sessionPersistence: { sessionName: 's', absoluteTimeout: '1h' } }],
      /cookieConfig\.lifetimeType: Session: the \w+ load balancer's cookie always carries an expiry/,
      F5_CAPABILITIES.http!,
    );
    const noLife = {
      ...HAPROXY_HTTP,
      sessionCookie: { absoluteTimeout: false, permanent: false, browserSession: true },
    };
    refusedRules(
      [{ sessionPersistence: { absoluteTimeout: '1m' } }],
      /cannot end a session after a time/,
      noLife,
    );
    const noPermanent = {
      ...HAPROXY_HTTP,
      sessionCookie: { absoluteTimeout: true, permanent: false, browserSession: true },
    };
    refusedRules(
      [{ sessionPersistence: { absoluteTimeout: '1m', cookieConfig: { lifetimeType: 'Permanent' } } }],
      /inserts session cookies only/,
      noPermanent,
    );
  });

  it('through the whole pass on HAProxy: the variant carries the cookie over the Service policy; removed, it goes', () => {
    const cfg = parseControllerConfig('clusterName: c1\nvip: {cidrs: [192.0.2.0/28]}\n');
    const lb = { name: 'haproxy', caps: HAPROXY_CAPABILITIES };
    const view = (rules: Record<string, unknown>[]): ClusterView =>
      baseView({
        httpRoutes: [rulesRoute(rules)],
      });
    const plain = pool(INFRA, 'infra-backend-v1');
    const variant = sessionPoolName(plain, { name: 'sid' });
    const first = buildDesired(view([{ sessionPersistence: { sessionName: 'sid' } }, {}]), cfg, lb).state;
    const v = first.pools.find((p) => p.name === variant);
    assert.ok(v, first.pools.map((p) => p.name).join(' '));
    assert.deepEqual([v.persistence, v.sessionCookie, v.health], ['Cookie', { name: 'sid' }, 'http']);
    const base = first.pools.find((p) => p.name === plain)!;
    assert.deepEqual([base.persistence, base.sessionCookie], [undefined, undefined]);
    const alone = buildDesired(view([{ sessionPersistence: { sessionName: 'sid' } }]), cfg, lb).state;
    assert.deepEqual(
      alone.pools.filter((p) => p.service === `${INFRA}/infra-backend-v1`).map((p) => p.name),
      [variant],
    );
    const after = buildDesired(view([{}, {}]), cfg, lb).state;
    assert.ok(!after.pools.some((p) => p.name.includes('.session-')));
  });
});

describe('HAProxy: a route session cookie on the backend, both transports', () => {
  const p = {
    name: 'b',
    protocol: 'TCP',
    health: 'http',
    members: [],
    service: 'ns/s',
    servicePort: '8080',
    persistence: 'Cookie',
    sessionCookie: { name: 'sid', absoluteSeconds: 600, permanent: true },
  } as Pool;

  it('runtime: the cookie line carries the name, maxlife and Max-Age; read back from it; a hand edit seen', () => {
    const lines = balanceLines(p);
    assert.equal(lines[1], '    cookie sid insert indirect nocache dynamic maxlife 600s attr "Max-Age=600"');
    const back = readBackendPolicy('b', lines, [], {});
    assert.deepEqual(
      [back.policy.persistence, back.policy.sessionCookie, back.exact],
      ['Cookie', p.sessionCookie, true],
    );
    // A Service's cookie (no session): the pool's own name, nothing else, read back as no session.
    const own = balanceLines({ ...p, sessionCookie: undefined });
    assert.equal(own[1], `    cookie ${persistenceCookie('b')} insert indirect nocache dynamic`);
    assert.equal(readBackendPolicy('b', own, [], {}).policy.sessionCookie, undefined);
    // Edited by hand: another lifetime, another name: read as they are, so the pass writes ours again.
    const edited = lines.map((l) => l.replace('maxlife 600s', 'maxlife 60s'));
    assert.deepEqual(readBackendPolicy('b', edited, [], {}).policy.sessionCookie, {
      name: 'sid',
      absoluteSeconds: 60,
    });
    const renamed = lines.map((l) => l.replace('cookie sid', 'cookie other'));
    assert.equal(readBackendPolicy('b', renamed, [], {}).policy.sessionCookie?.name, 'other');
    // What reloads HAProxy: the cookie is part of the backend's shape.
    assert.notDeepEqual(poolShape(p), poolShape({ ...p, sessionCookie: { name: 'sid' } }));
  });

  it('Data Plane: the cookie model (name, maxlife, attr), read back from it; a hand edit seen', () => {
    const b = backendFor(p, true, {
      owner: 'c1',
      apiVersion: 'v3',
      slots: 2,
      healthChecks: true,
      transparentBinds: false,
    });
    assert.deepEqual(b.cookie, {
      name: 'sid',
      type: 'insert',
      indirect: true,
      nocache: true,
      dynamic: true,
      maxlife: 600,
      attr: [{ value: 'Max-Age=600' }],
    });
    const back = readDataplanePolicy(b, [], {});
    assert.deepEqual([back.policy.sessionCookie, back.exact], [p.sessionCookie, true]);
    const noAttr = readDataplanePolicy({ ...b, cookie: { ...b.cookie!, attr: undefined } }, [], {});
    assert.deepEqual(noAttr.policy.sessionCookie, { name: 'sid', absoluteSeconds: 600 });
    const stray = readDataplanePolicy(
      { ...b, cookie: { ...b.cookie!, attr: [{ value: 'Secure' }] } },
      [],
      {},
    );
    assert.equal(stray.exact, false, 'an attribute of no policy of ours: not exact');
  });

  it('every adapter not declaring it (or not what is asked) refuses the pool, by name and terminal (preflight)', () => {
    const change = (d: Pool) => ({ op: 'create' as const, kind: 'pool' as const, name: 'b', desired: d });
    // BIG-IP keeps a Permanent one (p), not one for the browser's session.
    assert.equal(capabilityProblem(change(p), F5_CAPABILITIES, 'f5'), undefined);
    const browser = { ...p, sessionCookie: { name: 'sid', absoluteSeconds: 600 } };
    assert.match(
      capabilityProblem(change(browser), F5_CAPABILITIES, 'f5')?.message ?? '',
      /a route's session cookie for the browser's session \(no expiry\) is not kept by the f5 adapter/,
    );
    const none = { ...HAPROXY_CAPABILITIES, http: { ...HAPROXY_HTTP, sessionCookie: undefined } };
    const problem = capabilityProblem(change(p), none, 'x');
    assert.deepEqual([problem?.code, problem?.terminal], ['Unsupported', true]);
    assert.match(problem!.message, /a route's session cookie is not kept by the x adapter/);
    // Avi: whole minutes up to 10 days, and a lifetime only for a Permanent cookie.
    const avi = aviCapabilities(false);
    const permanent = (absoluteSeconds: number) => ({
      ...p,
      sessionCookie: { absoluteSeconds, permanent: true },
    });
    assert.equal(capabilityProblem(change(permanent(600)), avi, 'avi'), undefined);
    assert.equal(capabilityProblem(change({ ...p, sessionCookie: {} }), avi, 'avi'), undefined);
    for (const [d, why] of [
      [permanent(90), /session cookie of 90s is not kept by the avi adapter/],
      [permanent(864_060), /session cookie of 864060s is not kept/],
      [browser, /session cookie for the browser's session with a lifetime is not kept by the avi adapter/],
    ] as const)
      assert.match(capabilityProblem(change(d), avi, 'avi')?.message ?? '', why);
    assert.equal(capabilityProblem(change(p), HAPROXY_CAPABILITIES, 'haproxy'), undefined);
    const partial = {
      ...HAPROXY_CAPABILITIES,
      http: {
        ...HAPROXY_HTTP,
        sessionCookie: { absoluteTimeout: false, permanent: false, browserSession: true },
      },
    };
    assert.match(
      capabilityProblem(change(p), partial, 'x')!.message,
      /session cookie with a lifetime is not kept/,
    );
  });
});
