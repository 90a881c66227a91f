import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { fetch } from 'undici';
import { BigIpSimulator } from '../../../../sim/f5/simulator.ts';

const decl = (tenant: string, pool: Record<string, unknown>) => ({
  class: 'ADC',
  schemaVersion: '3.56.0',
  id: 'test',
  [tenant]: { class: 'Tenant', app: { class: 'Application', web: pool } },
});
const goodPool = {
  class: 'Pool',
  monitors: ['tcp'],
  members: [{ servicePort: 61000, serverAddresses: ['192.0.2.1'], remark: 'node n1' }],
};

async function started(opts: ConstructorParameters<typeof BigIpSimulator>[0] = {}) {
  const sim = new BigIpSimulator(opts);
  const url = await sim.start();
  const call = async (method: string, path: string, body?: unknown, token?: string) => {
    const r = await fetch(`${url}${path}`, {
      method,
      headers: { 'content-type': 'application/json', ...(token ? { 'x-f5-auth-token': token } : {}) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await r.text();
    return { status: r.status, body: (text ? JSON.parse(text) : undefined) as Record<string, unknown> };
  };
  const login = async () => {
    const r = await call('POST', '/mgmt/shared/authn/login', {
      username: 'admin',
      password: 'admin',
      loginProviderName: 'tmos',
    });
    return (r.body.token as { token: string }).token;
  };
  return { sim, call, login };
}

describe('BIG-IP simulator', () => {
  it('tokens: 401 without one, with a bad one and after expiry; renewal extends; bad passwords refused', async (t) => {
    let now = 1_000_000;
    const { sim, call, login } = await started({ now: () => now, tokenLifetimeSec: 1200 });
    t.after(() => sim.close());
    assert.equal(
      (await call('POST', '/mgmt/shared/authn/login', { username: 'admin', password: 'x' })).status,
      401,
    );
    assert.equal((await call('GET', '/mgmt/shared/appsvcs/info')).status, 401);
    assert.equal((await call('GET', '/mgmt/shared/appsvcs/info', undefined, 'NOPE')).status, 401);
    const token = await login();
    const info = await call('GET', '/mgmt/shared/appsvcs/info', undefined, token);
    assert.equal(info.status, 200);
    assert.equal(info.body.version, '3.56.0');
    now += 1100_000;
    assert.equal(
      (await call('PATCH', `/mgmt/shared/authz/tokens/${token}`, { timeout: 1200 }, token)).status,
      200,
    );
    now += 1100_000;
    assert.equal((await call('GET', '/mgmt/shared/appsvcs/info', undefined, token)).status, 200, 'renewed');
    now += 1300_000;
    assert.equal((await call('GET', '/mgmt/shared/appsvcs/info', undefined, token)).status, 401, 'expired');
  });

  it('declarations: 422 with AS3 errors[] for schema and pointer faults; selective updates, "no change", removal', async (t) => {
    const { sim, call, login } = await started();
    t.after(() => sim.close());
    const token = await login();
    assert.equal((await call('GET', '/mgmt/shared/appsvcs/declare', undefined, token)).status, 204);
    const bad = await call(
      'POST',
      '/mgmt/shared/appsvcs/declare',
      decl('t1', { ...goodPool, members: [{ servicePort: 70000, serverAddresses: ['192.0.2.1'] }] }),
      token,
    );
    assert.equal(bad.status, 422);
    assert.match(
      String((bad.body.errors as string[])[0]),
      /^\/t1\/app\/web\/members\/0\/servicePort: must be <= 65535/,
    );
    const dangling = await call(
      'POST',
      '/mgmt/shared/appsvcs/declare',
      {
        ...decl('t1', goodPool),
        t1: {
          class: 'Tenant',
          app: {
            class: 'Application',
            vs: { class: 'Service_TCP', virtualPort: 80, virtualAddresses: ['192.0.2.9'], pool: 'gone' },
          },
        },
      },
      token,
    );
    assert.equal(dangling.status, 422);
    assert.match(
      String((dangling.body.errors as string[])[0]),
      /\/t1\/app\/vs\/pool: contains path to non-existing object "gone"/,
    );
    const ok = await call('POST', '/mgmt/shared/appsvcs/declare', decl('t1', goodPool), token);
    assert.equal(ok.status, 200);
    assert.deepEqual(
      (ok.body.results as { tenant: string; message: string }[]).map((r) => [r.tenant, r.message]),
      [['t1', 'success']],
    );
    await call('POST', '/mgmt/shared/appsvcs/declare', decl('t2', goodPool), token);
    const again = await call('POST', '/mgmt/shared/appsvcs/declare', decl('t1', goodPool), token);
    assert.equal((again.body.results as { message: string }[])[0]!.message, 'no change');
    assert.deepEqual([...sim.tenants.keys()], ['t1', 't2'], 'selective: t2 untouched by a declaration of t1');
    const pools = await call('GET', '/mgmt/tm/ltm/pool', undefined, token);
    assert.deepEqual(
      (pools.body.items as { fullPath: string }[]).map((p) => p.fullPath),
      ['/t1/app/web', '/t2/app/web'],
    );
    const members = await call('GET', '/mgmt/tm/ltm/pool/~t1~app~web/members', undefined, token);
    assert.deepEqual(
      (members.body.items as { name: string; description: string; session: string }[]).map((m) => [
        m.name,
        m.description,
        m.session,
      ]),
      [['192.0.2.1:61000', 'node n1', 'monitor-enabled']],
    );
    const removed = await call(
      'POST',
      '/mgmt/shared/appsvcs/declare',
      { class: 'ADC', schemaVersion: '3.56.0', t1: { class: 'Tenant' } },
      token,
    );
    assert.equal(removed.status, 200);
    assert.deepEqual([...sim.tenants.keys()], ['t2']);
    // AS3 points into no other tenant (only /Common/Shared): a pool of t2 is not t3's to use.
    const across = await call(
      'POST',
      '/mgmt/shared/appsvcs/declare',
      {
        class: 'ADC',
        schemaVersion: '3.56.0',
        t3: {
          class: 'Tenant',
          app: {
            class: 'Application',
            vs: {
              class: 'Service_TCP',
              virtualPort: 80,
              virtualAddresses: ['192.0.2.9'],
              pool: { use: '/t2/app/web' },
            },
          },
        },
      },
      token,
    );
    assert.equal(across.status, 422);
    assert.match(
      String((across.body.errors as string[])[0]),
      /\/t3\/app\/vs\/pool: contains path to non-existing object "\/t2\/app\/web"/,
    );
  });

  it('one declaration at a time (503 while busy); past the threshold 202 and a task to poll', async (t) => {
    const { sim, call, login } = await started({ latencyMs: 150, asyncThresholdMs: 100 });
    t.after(() => sim.close());
    const token = await login();
    const first = await call('POST', '/mgmt/shared/appsvcs/declare', decl('t1', goodPool), token);
    assert.equal(first.status, 202);
    const id = String(first.body.id);
    const busy = await call('POST', '/mgmt/shared/appsvcs/declare', decl('t2', goodPool), token);
    assert.equal(busy.status, 503);
    const running = await call('GET', `/mgmt/shared/appsvcs/task/${id}`, undefined, token);
    assert.equal((running.body.results as { message: string }[])[0]!.message, 'in progress');
    await new Promise((r) => setTimeout(r, 250));
    const done = await call('GET', `/mgmt/shared/appsvcs/task/${id}`, undefined, token);
    assert.deepEqual(
      (done.body.results as { code: number; tenant: string }[]).map((r) => [r.code, r.tenant]),
      [[200, 't1']],
    );
    assert.deepEqual([...sim.tenants.keys()], ['t1']);
    // GET /task lists every task AS3 remembers, this one done.
    const list = await call('GET', '/mgmt/shared/appsvcs/task', undefined, token);
    assert.equal(list.status, 200);
    assert.deepEqual(
      (list.body.items as { id: string; results: { code: number }[] }[]).map((i) => [
        i.id,
        i.results[0]!.code,
      ]),
      [[id, 200]],
    );
  });

  it('POST /declare/<tenants>: only the URL\'s tenants of the body are deployed; none of them is "no change"', async (t) => {
    const { sim, call, login } = await started({});
    t.after(() => sim.close());
    const token = await login();
    await call('POST', '/mgmt/shared/appsvcs/declare', decl('cis', goodPool), token);
    const cisBefore = JSON.stringify(sim.tenants.get('cis'));
    // A body carrying two tenants, posted for one of them: the other is not touched.
    const both = { ...decl('t1', goodPool), cis: (decl('t1', goodPool) as Record<string, unknown>).t1 };
    (both.cis as Record<string, unknown>).other = { class: 'Application', template: 'generic' };
    const scoped = await call('POST', '/mgmt/shared/appsvcs/declare/t1', both, token);
    assert.equal(scoped.status, 200);
    assert.deepEqual(
      (scoped.body.results as { tenant: string }[]).map((r) => r.tenant),
      ['t1'],
    );
    assert.equal(JSON.stringify(sim.tenants.get('cis')), cisBefore, 'the other tenant as it was');
    assert.ok(sim.tenants.has('t1'));
    const none = await call('POST', '/mgmt/shared/appsvcs/declare/t9,t8', decl('t1', goodPool), token);
    assert.equal(none.status, 200);
    assert.deepEqual(
      (none.body.results as { tenant: string; message: string }[]).map((r) => [r.tenant, r.message]),
      [
        ['t9', 'no change'],
        ['t8', 'no change'],
      ],
    );
  });
});

describe('BIG-IP simulator: AS3 contract', () => {
  it('optimisticLockKey refuses a tenant changed since it was read; controls.dryRun changes nothing; updateMode complete removes the undeclared', async (t) => {
    const { sim, call, login } = await started();
    t.after(() => sim.close());
    const token = await login();
    const post = (body: unknown) => call('POST', '/mgmt/shared/appsvcs/declare', body, token);
    assert.equal((await post(decl('t1', goodPool))).status, 200);
    const read = await call('GET', '/mgmt/shared/appsvcs/declare?showHash=true', undefined, token);
    const key = (read.body.t1 as { optimisticLockKey: string }).optimisticLockKey;
    assert.match(key, /^[0-9a-f]{32}$/);
    const plain = await call('GET', '/mgmt/shared/appsvcs/declare', undefined, token);
    assert.equal('optimisticLockKey' in (plain.body.t1 as object), false, 'no key unless asked');
    // Someone else changes t1; our key is stale.
    const changed = { ...goodPool, members: [{ ...goodPool.members[0]!, servicePort: 61001 }] };
    assert.equal((await post(decl('t1', changed))).status, 200);
    const withKey = decl('t1', goodPool);
    (withKey.t1 as Record<string, unknown>).optimisticLockKey = key;
    const stale = await post(withKey);
    assert.equal(stale.status, 422);
    assert.match(String((stale.body.results as { message: string }[])[0]!.message), /optimisticLockKey/);
    assert.equal(
      (sim.tenants.get('t1')!.app as Record<string, { members: { servicePort: number }[] }>).web!.members[0]!
        .servicePort,
      61001,
      'left as the other writer made it',
    );
    // With the current key it goes; the key is not stored.
    const fresh = await call('GET', '/mgmt/shared/appsvcs/declare/t1?showHash=true', undefined, token);
    (withKey.t1 as Record<string, unknown>).optimisticLockKey = (
      fresh.body.t1 as { optimisticLockKey: string }
    ).optimisticLockKey;
    assert.equal((await post(withKey)).status, 200);
    assert.equal('optimisticLockKey' in sim.tenants.get('t1')!, false);
    // A dry run answers as it would deploy and changes nothing.
    const dry = await post({ ...decl('t2', goodPool), controls: { class: 'Controls', dryRun: true } });
    assert.equal(dry.status, 200);
    assert.deepEqual(
      (dry.body.results as { tenant: string; message: string; dryRun: boolean }[]).map((r) => [
        r.tenant,
        r.message,
        r.dryRun,
      ]),
      [['t2', 'success', true]],
    );
    assert.equal(sim.tenants.has('t2'), false);
    assert.equal((await post(decl('t2', goodPool))).status, 200);
    // updateMode complete: t1 is not declared, so it goes.
    assert.equal((await post({ ...decl('t2', goodPool), updateMode: 'complete' })).status, 200);
    assert.deepEqual([...sim.tenants.keys()], ['t2']);
  });

  it('per-application declarations (AS3 3.47): one application in or out, the others untouched; refused before 3.47', async (t) => {
    const { sim, call, login } = await started({ latencyMs: 0 });
    t.after(() => sim.close());
    const token = await login();
    const apps = '/mgmt/shared/appsvcs/declare/t1/applications';
    const app = (port: number) => ({
      class: 'Application',
      web: { ...goodPool, members: [{ ...goodPool.members[0]!, servicePort: port }] },
    });
    assert.equal(
      (await call('POST', apps, { schemaVersion: '3.56.0', a1: app(61001), a2: app(61002) }, token)).status,
      200,
    );
    const posts = sim.stats.appsPosted;
    const one = await call('POST', apps, { schemaVersion: '3.56.0', a2: app(61003) }, token);
    assert.equal(one.status, 200);
    assert.equal(sim.stats.appsPosted - posts, 1, 'one application posted');
    const got = await call('GET', apps, undefined, token);
    assert.deepEqual(Object.keys(got.body).sort(), ['a1', 'a2']);
    assert.deepEqual(got.body.a1, app(61001), 'a1 untouched');
    assert.equal((await call('GET', `${apps}/a2`, undefined, token)).body.web instanceof Object, true);
    // The same again: no change.
    const same = await call('POST', apps, { schemaVersion: '3.56.0', a2: app(61003) }, token);
    assert.equal((same.body.results as { message: string }[])[0]!.message, 'no change');
    // An invalid application is refused whole, naming its path; nothing changes.
    const bad = await call(
      'POST',
      apps,
      { schemaVersion: '3.56.0', a3: { class: 'Application', web: { class: 'Pool', members: 'x' } } },
      token,
    );
    assert.equal(bad.status, 422);
    assert.match(JSON.stringify(bad.body.errors), /\/t1\/a3\/web\/members/);
    assert.equal((await call('GET', `${apps}/a3`, undefined, token)).status, 404);
    // Out with one; the last one out takes the tenant.
    assert.equal((await call('DELETE', `${apps}/a1`, undefined, token)).status, 200);
    assert.deepEqual(Object.keys((await call('GET', apps, undefined, token)).body), ['a2']);
    assert.equal((await call('DELETE', `${apps}/a1`, undefined, token)).status, 404);
    assert.equal((await call('DELETE', `${apps}/a2`, undefined, token)).status, 200);
    assert.equal(sim.tenants.has('t1'), false);
    assert.equal((await call('GET', '/mgmt/shared/appsvcs/declare', undefined, token)).status, 204);

    const old = await started({ as3Version: '3.46.0' });
    t.after(() => old.sim.close());
    const oldToken = await old.login();
    assert.equal((await old.call('POST', apps, { a1: app(61001) }, oldToken)).status, 404);
  });

  it('device time grows with what a declaration changes: a large tenant turns asynchronous by itself; reads answered while busy', async (t) => {
    const { sim, call, login } = await started({ latencyPerKiBMs: 20, asyncThresholdMs: 200 });
    t.after(() => sim.close());
    const token = await login();
    const small = await call('POST', '/mgmt/shared/appsvcs/declare', decl('t1', goodPool), token);
    assert.equal(small.status, 200, 'a small tenant deploys within the threshold');
    const many = Array.from({ length: 200 }, (_, i) => ({
      servicePort: 20000 + i,
      serverAddresses: ['192.0.2.1'],
    }));
    const big = await call(
      'POST',
      '/mgmt/shared/appsvcs/declare',
      decl('t2', { ...goodPool, members: many }),
      token,
    );
    assert.equal(big.status, 202, 'past the threshold: a task');
    const busy = await call('POST', '/mgmt/shared/appsvcs/declare', decl('t3', goodPool), token);
    assert.equal(busy.status, 503, 'one declaration at a time');
    const read = await call('GET', '/mgmt/shared/appsvcs/declare', undefined, token);
    assert.equal(read.status, 200, 'reads are answered meanwhile');
    const id = String(big.body.id);
    const deadline = Date.now() + 10_000;
    let done = false;
    while (!done && Date.now() < deadline) {
      const task = await call('GET', `/mgmt/shared/appsvcs/task/${id}`, undefined, token);
      done = (task.body.results as { message: string }[])[0]!.message !== 'in progress';
      if (!done) await new Promise((r) => setTimeout(r, 50));
    }
    assert.ok(done);
    assert.ok(sim.tenants.has('t2'));
  });
});
