import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { fetch } from 'undici';
import { BigIpSimulator } from '../../../../adapters/f5/simulator.ts';

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
  });
});
