/**
 * A route's sessions on BIG-IP (persistence.ts): the rule's persist action inserts the cookie the
 * rule names, its expiry the rule's absoluteTimeout in AS3's `[Nd][HH:MM[:SS]]` (always with its
 * time part, never the pool's own `1d`); a cookie for the browser's session alone cannot be said
 * (a policy's cookie always carries an expiry) and is refused by name at the source and in the
 * preflight. Through the adapter on both AS3 layouts: written, read back unchanged after a restart
 * (a weighted rule's variants from their metadata), the same lifetime in another format read as
 * such, another lifetime, name or an unreadable expiry set by hand written again, taken off.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { F5_CAPABILITIES } from '../../../../adapters/f5/capabilities.ts';
import { cookieExpiry, expirySeconds } from '../../../../adapters/f5/persistence.ts';
import { capabilityProblem } from '../../../../src/adapter/preflight.ts';
import { persistenceCookie } from '../../../../src/model/persistence.ts';
import type { HttpRoute, L7VirtualService, LbState, Pool } from '../../../../src/model/types.ts';
import { plan } from '../../../../src/plan/diff.ts';
import { ruleSession } from '../../../../src/source/gateway/rule-session.ts';
import { Refused } from '../../../../src/source/gateway/route-filters.ts';
import { converge } from '../../../support/converge.ts';
import { startF5 } from '../../../support/f5-sim.ts';
import { l7, member, pool as kitPool, route as kitRoute } from '../../../support/model.ts';

type Json = Record<string, unknown>;

const SID = 'c1--default-web-80.l7.session-0a1b2c3d';
const A = 'c1--default-web-80.l7.session-1111';
const B = 'c1--default-api-80.l7.session-2222';
const VS = 'c1--gw-default.gw-HTTP-80';

const pool = (name: string, extra: Partial<Pool> = {}): Pool =>
  kitPool(name, [member('192.0.2.1', 61000)], { health: 'http', ...extra });
const route = (path: string, p: string, extra: Partial<HttpRoute> = {}): HttpRoute =>
  kitRoute({ path, pool: p, ...extra });
const vs = (routes: HttpRoute[]): L7VirtualService => l7(VS, routes, { vip: '192.0.2.20' });
const session = (name: string | undefined, absoluteSeconds: number): Partial<Pool> => ({
  persistence: 'Cookie',
  sessionCookie: { ...(name ? { name } : {}), absoluteSeconds, permanent: true },
});

describe('BIG-IP: route sessions', () => {
  it("the expiry is AS3's [Nd][HH:MM[:SS]], always with its time, read back to the same seconds", () => {
    for (const [s, text] of [
      [600, '00:10:00'],
      [86_400, '1d00:00:00'],
      [90_061, '1d01:01:01'],
      [1, '00:00:01'],
    ] as const) {
      assert.equal(cookieExpiry(s), text);
      assert.equal(expirySeconds(text), s);
    }
    assert.equal(expirySeconds('1d'), 86_400);
    assert.equal(expirySeconds('01:30'), 5_400);
    for (const bad of ['', 'x', '00:61', '1d00:00:99', '1h', '-1d', ' 1d', 5, undefined])
      assert.equal(expirySeconds(bad), undefined, String(bad));
    assert.throws(() => cookieExpiry(0), /not a lifetime/);
    assert.throws(() => cookieExpiry(1.5), /not a lifetime/);
  });

  it('a Session cookie (the default lifetime) is refused by name; Permanent with absoluteTimeout is kept', () => {
    const lb = { sessionCookie: F5_CAPABILITIES.http?.sessionCookie, adapter: 'f5' };
    assert.deepEqual(
      ruleSession(
        {
          type: 'Cookie',
          sessionName: 'cart-sid',
          absoluteTimeout: '10m',
          cookieConfig: { lifetimeType: 'Permanent' },
        },
        'rules[0].sessionPersistence',
        lb,
      ),
      { name: 'cart-sid', absoluteSeconds: 600, permanent: true },
    );
    for (const asked of [{}, { absoluteTimeout: '10m' }, { cookieConfig: { lifetimeType: 'Session' } }])
      assert.throws(
        () => ruleSession(asked, 'rules[0].sessionPersistence', lb),
        (e: unknown) =>
          e instanceof Refused &&
          /rules\[0\]\.sessionPersistence\.cookieConfig\.lifetimeType: Session: the f5 load balancer's cookie always carries an expiry/.test(
            e.message,
          ),
      );
    // A pool asking one anyway (another source, a stale plan): refused before rendering.
    const p = pool(SID, { persistence: 'Cookie', sessionCookie: { name: 'sid' } });
    assert.match(
      capabilityProblem({ op: 'create', kind: 'pool', name: SID, desired: p }, F5_CAPABILITIES, 'BIG-IP')
        ?.message ?? '',
      /a route's session cookie for the browser's session \(no expiry\) is not kept by the BIG-IP adapter/,
    );
  });

  for (const version of ['3.56.0', '3.46.0']) {
    it(`through the adapter on AS3 ${version}: written, read back, hand edits repaired, taken off`, async (t) => {
      const { adapter, objects, edit } = await startF5(t, version);
      const want = (s: Partial<Pool>): LbState => ({
        pools: [pool(SID, s), pool(A, session(undefined, 90_061)), pool(B, session(undefined, 90_061))],
        virtualServices: [
          vs([
            route('/cart', SID),
            route('/split', '', {
              backends: [
                { pool: A, weight: 1 },
                { pool: B, weight: 1 },
              ],
            }),
          ]),
        ],
      });
      /** The rule forwarding to `target` (a pool, or the weighted rule's split `_w<i>`). */
      const ruleTo = (rules: { actions: Json[] }[], target: RegExp) =>
        rules.find((r) =>
          r.actions.some(
            (a) =>
              a.type === 'forward' && target.test(String((a.select as { pool: { use: string } }).pool.use)),
          ),
        )!;
      const persistOf = (path: string) => {
        const policy = objects()[`${VS}_policy`] as { rules: { actions: Json[] }[] };
        const target = path === '/cart' ? new RegExp(`${SID}$`) : /_w\d+$/;
        return ruleTo(policy.rules, target).actions.find((a) => a.type === 'persist')?.cookieInsert;
      };
      const splitIndex = () =>
        Object.keys(objects())
          .find((k) => k.startsWith(`${VS}_w`) && objects()[k]!.class === 'Pool')!
          .slice(`${VS}_w`.length);
      const state = want(session('cart-sid', 600));
      await converge(adapter, state);
      assert.deepEqual(persistOf('/cart'), { name: 'cart-sid', expiry: '00:10:00' });
      // A weighted rule's cookie is named after its split, its expiry the rule's.
      assert.deepEqual(persistOf('/split'), {
        name: persistenceCookie(`${VS}_w${splitIndex()}`),
        expiry: '1d01:01:01',
      });
      // Read back as asked: nothing to write (the split's variants from their metadata).
      assert.deepEqual(plan(state, await adapter.observe()).changes, []);

      // By hand: another lifetime, an expiry the model cannot read, another name: each written
      // again as the rule says it.
      // Every rule forwarding to the pool (a prefix is two rules: the path and below it).
      const setCookie = (cookie: Json) =>
        edit(`${VS}_policy`, (o) => {
          for (const rule of o.rules as { actions: Json[] }[])
            if (rule.actions.some((a) => a.type === 'forward' && String(JSON.stringify(a)).includes(SID)))
              for (const a of rule.actions) if (a.type === 'persist') a.cookieInsert = cookie;
        });
      // The same lifetime in another format reads the same: nothing to write.
      setCookie({ name: 'cart-sid', expiry: '00:10' });
      assert.deepEqual(plan(state, await adapter.observe()).changes, []);
      // One of the pool's two rules edited: they disagree, and the pool is written again.
      edit(`${VS}_policy`, (o) => {
        const rule = ruleTo(o.rules as { actions: Json[] }[], new RegExp(`${SID}$`));
        for (const a of rule.actions)
          if (a.type === 'persist') a.cookieInsert = { name: 'cart-sid', expiry: '00:30:00' };
      });
      assert.notDeepEqual(plan(state, await adapter.observe()).changes, []);
      await converge(adapter, state);
      assert.deepEqual(persistOf('/cart'), { name: 'cart-sid', expiry: '00:10:00' });
      for (const cookie of [
        { name: 'cart-sid', expiry: '00:20:00' },
        { name: 'cart-sid', expiry: 'never' },
        { name: 'other', expiry: '00:10:00' },
      ]) {
        setCookie(cookie);
        assert.notDeepEqual(plan(state, await adapter.observe()).changes, [], JSON.stringify(cookie));
        await converge(adapter, state);
        assert.deepEqual(persistOf('/cart'), { name: 'cart-sid', expiry: '00:10:00' });
      }

      // Taken off: the pool's own cookie (a day), without a lifetime of the rule's.
      await converge(adapter, want({ persistence: 'Cookie' }));
      assert.deepEqual(persistOf('/cart'), { name: persistenceCookie(SID), expiry: '1d' });
      const back = (await adapter.observe()).owned.pools.find((p) => p.name === SID)!;
      assert.equal(back.sessionCookie, undefined);
      assert.equal(back.persistence, 'Cookie');
    });
  }
});
