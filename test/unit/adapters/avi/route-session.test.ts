/**
 * Issue 48, item 5 on Avi: a route's session cookie (Pool.sessionCookie, an HTTPRoute rule's
 * `sessionPersistence`) through a change. The rule's pool variant refers to a persistence profile
 * of its own (`<pool>-session`: the cookie's name, its lifetime in minutes, whether it carries
 * it), written before the pool and read back from the profile's fields; a new lifetime updates the
 * profile in place; the session dropped puts the pool back on the system cookie profile and
 * removes its own; a deleted pool takes it along. What the controller cannot keep is refused for
 * that pool alone before anything is written; a profile of that name that is not ours, or a
 * controller failing the profile's write, leaves the pool unwritten until a later pass.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { sessionProfileName } from '../../../../adapters/avi/route-session.ts';
import { AviSimulator } from '../../../../sim/avi/simulator.ts';
import { plan } from '../../../../src/plan/diff.ts';
import { persistenceCookie } from '../../../../src/model/persistence.ts';
import type { Pool, SessionCookie } from '../../../../src/model/types.ts';
import { aviAdapter } from '../../../support/lb-fixtures.ts';
import * as kit from '../../../support/model.ts';

const POOL = 'c1--default-web-80.l7.session-0123abcd';
const OTHER = 'c1--default-api-80.l7';

const sessionPool = (name: string, session: SessionCookie | undefined): Pool => ({
  ...kit.pool(name, [kit.member('192.0.2.1', 61000, { node: 'n1', pod: 'default/web-0' })], {
    health: 'http',
    service: 'default/web',
    servicePort: 'http',
  }),
  ...(session ? { persistence: 'Cookie' as const, sessionCookie: session } : {}),
});

const vs = (pools: string[]) =>
  kit.l7(
    'c1--ingress-npl',
    pools.map((p, i) => kit.route({ host: 'a.example', path: `/p${i}`, pool: p })),
  );

async function setup(t: { after: (fn: () => Promise<void>) => void }, version = '22.1.3') {
  const sim = new AviSimulator({ version });
  const adapter = aviAdapter(await sim.start(), { version });
  t.after(async () => {
    await adapter.close();
    await sim.close();
  });
  const apply = async (pools: Pool[]) => {
    const state = { pools, virtualServices: [vs(pools.map((p) => p.name))] };
    const results = await adapter.apply(plan(state, await adapter.observe()).changes);
    return {
      failed: results
        .filter((x) => !x.ok)
        .map((x) => `${x.change.name}: ${x.error?.code} ${x.error?.message}`),
      left: plan(state, await adapter.observe()).changes.map((c) => `${c.op} ${c.kind} ${c.name}`),
    };
  };
  const profile = (pool = POOL) => sim.objects('applicationpersistenceprofile').get(sessionProfileName(pool));
  const refOf = (pool = POOL) =>
    String(sim.objects('pool').get(pool)?.application_persistence_profile_ref ?? '')
      .split('/')
      .pop();
  const nameOfRef = (pool = POOL) =>
    [...sim.objects('applicationpersistenceprofile').values()].find((o) => o.uuid === refOf(pool))?.name;
  return { sim, apply, profile, nameOfRef, session: adapter.session };
}

describe("Avi: a route's session cookie", () => {
  it("a profile of the pool's own, written first and read back; a new lifetime updates it in place; dropped, the pool goes back to the system profile and its own goes; deleted with the pool", async (t) => {
    const { sim, apply, profile, nameOfRef } = await setup(t);
    let r = await apply([sessionPool(POOL, { name: 'cart', absoluteSeconds: 3600, permanent: true })]);
    assert.deepEqual(r, { failed: [], left: [] }, 'written, and observed back as written');
    assert.deepEqual(profile()!.http_cookie_persistence_profile, {
      cookie_name: 'cart',
      timeout: 60,
      always_send_cookie: false,
      is_persistent_cookie: true,
    });
    assert.equal(profile()!.persistence_type, 'PERSISTENCE_TYPE_HTTP_COOKIE');
    assert.equal(nameOfRef(), sessionProfileName(POOL));
    const profileWrites = () =>
      sim.writeLog.filter((w) => w.type === 'applicationpersistenceprofile').map((w) => w.method);
    const poolWrite = sim.writeLog.findIndex((w) => w.type === 'pool' && w.name === POOL);
    const profileWrite = sim.writeLog.findIndex((w) => w.type === 'applicationpersistenceprofile');
    assert.ok(profileWrite >= 0 && profileWrite < poolWrite, 'the profile before the pool that refers to it');

    // A new lifetime: the same profile object, updated.
    const uuid = profile()!.uuid;
    r = await apply([sessionPool(POOL, { name: 'cart', absoluteSeconds: 600, permanent: true })]);
    assert.deepEqual(r, { failed: [], left: [] });
    assert.equal(profile()!.uuid, uuid, 'updated in place');
    assert.equal((profile()!.http_cookie_persistence_profile as { timeout: number }).timeout, 10);
    assert.deepEqual(profileWrites(), ['POST', 'PUT']);

    // A browser-session cookie of the pool's own name: no lifetime, not persistent.
    r = await apply([sessionPool(POOL, {})]);
    assert.deepEqual(r, { failed: [], left: [] });
    assert.deepEqual(profile()!.http_cookie_persistence_profile, {
      cookie_name: persistenceCookie(POOL),
      timeout: 0,
      always_send_cookie: false,
    });

    // The rule's session dropped, the Service's cookie persistence kept: the system profile.
    r = await apply([{ ...sessionPool(POOL, undefined), persistence: 'Cookie' }]);
    assert.deepEqual(r, { failed: [], left: [] });
    assert.equal(nameOfRef(), 'System-Persistence-Http-Cookie');
    assert.equal(profile(), undefined, 'its own profile removed once the pool lets it go');

    // Back, then the pool deleted: its profile goes after it.
    r = await apply([sessionPool(POOL, { name: 'cart' })]);
    assert.deepEqual(r, { failed: [], left: [] });
    assert.ok(profile());
    r = await apply([sessionPool(OTHER, undefined)]);
    assert.deepEqual(r, { failed: [], left: [] });
    assert.equal(sim.objects('pool').get(POOL), undefined);
    assert.equal(profile(), undefined, 'no profile left behind');
  });

  it('what the controller cannot keep is refused for that pool alone, before anything is written; the simulator refuses it too', async (t) => {
    // Before 21.1.3 a cookie cannot carry its expiry (is_persistent_cookie).
    const { sim, apply, profile, session } = await setup(t, '20.1.6');
    const beside = 'c1--default-beside-80.l7.session-89abcdef';
    const r = await apply([
      sessionPool(POOL, { absoluteSeconds: 600, permanent: true }),
      sessionPool(beside, { name: 'sid' }),
    ]);
    // The pool, and the virtual service routing to it (never sent without it).
    assert.equal(r.failed.length, 2, r.failed.join('\n'));
    assert.match(r.failed[1]!, /^c1--ingress-npl: DependencyFailed its pool .* is not on the device/);
    assert.match(
      r.failed[0]!,
      new RegExp(
        `^${POOL.replace(/\./g, '\\.')}: Invalid .*a Permanent session cookie needs Avi 21\\.1\\.3 or later \\(the API version is 20\\.1\\.6\\)`,
      ),
    );
    assert.equal(sim.objects('pool').get(POOL), undefined, 'no pool written');
    assert.equal(profile(), undefined, 'no profile written');
    assert.ok(sim.objects('pool').get(beside), 'the pool beside it is written');
    assert.ok(profile(beside));

    // Not whole minutes, or past 10 days (the source refuses both first).
    for (const absoluteSeconds of [90, 864_060]) {
      const again = await apply([sessionPool(POOL, { absoluteSeconds })]);
      assert.match(
        again.failed.join('\n'),
        new RegExp(`a session of ${absoluteSeconds} s is not a whole number of minutes up to 14400`),
      );
    }

    // The simulated controller's own refusals, as the Avi SDK's field texts state them.
    const write = async (body: Record<string, unknown>) => {
      const x = await session.call('POST', '/api/applicationpersistenceprofile', body);
      return [x.status, JSON.stringify(x.body)] as const;
    };
    const cookie = (c: Record<string, unknown>) => ({
      name: 'by-hand',
      persistence_type: 'PERSISTENCE_TYPE_HTTP_COOKIE',
      http_cookie_persistence_profile: { cookie_name: 'x', ...c },
    });
    const [s1, b1] = await write(cookie({ timeout: 20_000 }));
    assert.deepEqual([s1, /timeout: 20000 is not 0 or 1-14400/.test(b1)], [400, true], b1);
    const [s2, b2] = await write(cookie({ is_persistent_cookie: true }));
    assert.deepEqual(
      [s2, /is_persistent_cookie: unknown field .*introduced in 21\.1\.3/.test(b2)],
      [400, true],
      b2,
    );
    const [s3, b3] = await write({ ...cookie({}), persistence_type: 'PERSISTENCE_TYPE_FOREVER' });
    assert.deepEqual([s3, /persistence_type/.test(b3)], [400, true], b3);
    const [s4, b4] = await write(cookie({ cookie_name: 7 }));
    assert.deepEqual([s4, /cookie_name: expected a string/.test(b4)], [400, true], b4);
  });

  it('a profile of that name that is not ours, or a failed write of the profile, leaves the pool unwritten; a later pass writes it', async (t) => {
    const { sim, apply, profile, nameOfRef, session } = await setup(t);
    const want = [sessionPool(POOL, { name: 'cart' })];
    sim.faults.failNames.add(sessionProfileName(POOL));
    let r = await apply(want);
    assert.equal(r.failed.length, 2, r.failed.join('\n'));
    assert.match(r.failed[0]!, /Unavailable .*applicationpersistenceprofile/);
    assert.match(r.failed[1]!, /^c1--ingress-npl: DependencyFailed/);
    assert.equal(
      sim.objects('pool').get(POOL),
      undefined,
      'never a pool referring to a profile that is not there',
    );
    sim.faults.failNames.clear();
    r = await apply(want);
    assert.deepEqual(r, { failed: [], left: [] }, 'the next pass writes both');
    assert.equal(nameOfRef(), sessionProfileName(POOL));

    // Someone else's profile of the name the next pool would use: left alone, that pool refused.
    const next = 'c1--default-next-80.l7.session-00000000';
    const taken = await session.call('POST', '/api/applicationpersistenceprofile', {
      name: sessionProfileName(next),
      persistence_type: 'PERSISTENCE_TYPE_HTTP_COOKIE',
      http_cookie_persistence_profile: { cookie_name: 'theirs', timeout: 5 },
    });
    assert.equal(taken.status, 201);
    r = await apply([...want, sessionPool(next, { name: 'mine' })]);
    assert.equal(r.failed.length, 2, r.failed.join('\n'));
    assert.match(r.failed[0]!, /NotOwned applicationpersistenceprofile .* is not ours; left alone/);
    assert.equal(
      (profile(next)!.http_cookie_persistence_profile as { cookie_name: string }).cookie_name,
      'theirs',
      'untouched',
    );
    assert.equal(sim.objects('pool').get(next), undefined);
  });
});
