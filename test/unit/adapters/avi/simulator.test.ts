import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { fetch } from 'undici';
import { AviSimulator } from '../../../../sim/avi/simulator.ts';

async function started(t: { after: (fn: () => Promise<void>) => void }) {
  // A controller of the newest object model these tests use (it serves older ones too).
  const sim = new AviSimulator({ version: '31.2.1' });
  const url = await sim.start();
  t.after(() => sim.close());
  let cookie = '';
  let csrf = '';
  const call = async (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) => {
    const r = await fetch(`${url}${path}`, {
      method,
      headers: {
        'content-type': 'application/json',
        cookie,
        'x-csrftoken': csrf,
        referer: `${url}/`,
        'x-avi-version': '22.1.3',
        ...headers,
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await r.text();
    return { status: r.status, body: (text ? JSON.parse(text) : undefined) as Record<string, unknown> };
  };
  const login = async () => {
    const r = await fetch(`${url}/login`, {
      method: 'POST',
      body: JSON.stringify({ username: 'admin', password: 'admin' }),
    });
    const set = r.headers.getSetCookie();
    cookie = set.map((c) => c.split(';')[0]).join('; ');
    csrf = /csrftoken=([^;]+)/.exec(set.join(';'))![1]!;
    return r.status;
  };
  return { sim, url, call, login, noCsrf: () => (csrf = '') };
}

const pool = (name: string, extra: Record<string, unknown> = {}) => ({
  name,
  created_by: 'npl-lb-c1',
  cloud_ref: '/api/cloud?name=Default-Cloud',
  health_monitor_refs: ['/api/healthmonitor?name=System-TCP'],
  servers: [{ ip: { addr: '192.0.2.1', type: 'V4' }, port: 61000, hostname: 'n1', enabled: true }],
  ...extra,
});

describe('Avi Controller simulator', () => {
  it('sessions: 401 without one, 403 for writes without CSRF token or Referer; without X-Avi-Version, the oldest object model', async (t) => {
    const s = await started(t);
    assert.equal((await s.call('GET', '/api/pool')).status, 401);
    assert.equal(await s.login(), 200);
    assert.equal((await s.call('GET', '/api/pool')).status, 200);
    assert.equal((await s.call('GET', '/api/pool', undefined, { 'x-avi-version': '' })).status, 200);
    assert.equal(s.sim.stats.unversioned, 1);
    // A field of a later object model is unknown to the oldest one, and to 22.1.3.
    const later = pool('g', { graceful_disable_timeout_sec: 60 });
    const old = await s.call('POST', '/api/pool', later, { 'x-avi-version': '' });
    assert.equal(old.status, 400);
    assert.match(
      String(old.body.error),
      /graceful_disable_timeout_sec: unknown field in the object model of 18\.2\.1/,
    );
    assert.equal((await s.call('POST', '/api/pool', later)).status, 400);
    const bad = await s.call('POST', '/api/pool', pool('g', { graceful_disable_timeout_sec: 500000 }), {
      'x-avi-version': '31.2.1',
    });
    assert.match(
      String(bad.body.error),
      /graceful_disable_timeout_sec: must be an integer from -1 to 432000/,
    );
    const ok = await s.call('POST', '/api/pool', later, { 'x-avi-version': '31.2.1' });
    assert.equal(ok.status, 201);
    assert.equal(ok.body.graceful_disable_timeout_sec, 60);
    assert.equal(ok.body.graceful_disable_timeout, undefined, '31.2.1 no longer defaults the minutes');
    assert.equal(
      (await s.call('DELETE', `/api/pool/${String(ok.body.uuid)}`, undefined, { 'x-avi-version': '31.2.1' }))
        .status,
      204,
    );
    assert.equal((await s.call('POST', '/api/pool', pool('p'), { referer: '' })).status, 403);
    assert.equal((await s.call('GET', '/api/pool', undefined, { 'x-avi-tenant': 'nope' })).status, 404);
    s.noCsrf();
    const r = await s.call('POST', '/api/pool', pool('p'));
    assert.equal(r.status, 403);
    assert.match(String(r.body.error), /CSRF/);
    s.sim.expireSessions();
    assert.equal((await s.call('GET', '/api/pool')).status, 401);
  });

  it('objects: the field model enforced, references resolved, names unique, paging, filters, referrers protected, stale writes refused', async (t) => {
    const s = await started(t);
    await s.login();
    const unknown = await s.call('POST', '/api/pool', pool('p', { colour: 'red' }));
    assert.equal(unknown.status, 400);
    assert.match(String(unknown.body.error), /colour: unknown field/);
    const missing = await s.call('POST', '/api/pool', { created_by: 'x' });
    assert.match(String(missing.body.error), /name: field is required/);
    const badType = await s.call(
      'POST',
      '/api/pool',
      pool('p', { servers: [{ ip: { addr: '192.0.2.1', type: 'V4' }, port: '80' }] }),
    );
    assert.match(String(badType.body.error), /servers\[0\]\.port: expected an integer/);
    const badRef = await s.call('POST', '/api/pool', pool('p', { cloud_ref: '/api/cloud?name=Nowhere' }));
    assert.equal(badRef.status, 400);
    assert.match(String(badRef.body.error), /cloud_ref: Cannot find object: \/api\/cloud\?name=Nowhere/);
    const created = await s.call('POST', '/api/pool', pool('p'));
    assert.equal(created.status, 201);
    assert.match(String(created.body.uuid), /^pool-/);
    assert.match(String(created.body.cloud_ref), /^http:\/\/127\.0\.0\.1:\d+\/api\/cloud\/cloud-/);
    assert.match(String(created.body._last_modified), /^\d{16}$/, 'microseconds, as a string');
    // Defaults a controller fills in are returned on create and on every read.
    assert.equal(created.body.lb_algorithm, 'LB_ALGORITHM_LEAST_CONNECTIONS');
    assert.equal(created.body.graceful_disable_timeout, 1, 'before 31.2.1: 1 minute');
    assert.deepEqual(
      (created.body.servers as { ratio: number; enabled: boolean }[]).map((x) => [x.ratio, x.enabled]),
      [[1, true]],
    );
    const read = await s.call('GET', `/api/pool/${String(created.body.uuid)}?include_name=true`);
    assert.equal(read.body.default_server_port, 80);
    assert.match(
      String(read.body.cloud_ref),
      /\/api\/cloud\/cloud-[^#]+#Default-Cloud$/,
      'url#name when asked',
    );
    assert.doesNotMatch(String(read.body.url), /#/);
    assert.equal((await s.call('POST', '/api/pool', pool('p'))).status, 409);
    for (let i = 0; i < 30; i++)
      await s.call(
        'POST',
        '/api/pool',
        pool(`q${String(i).padStart(2, '0')}`, { created_by: i % 2 ? 'other' : 'npl-lb-c1' }),
      );
    const page1 = await s.call('GET', '/api/pool?page_size=10');
    assert.equal(page1.body.count, 31);
    assert.equal((page1.body.results as unknown[]).length, 10);
    const next = new URL(String(page1.body.next));
    const page2 = await s.call('GET', next.pathname + next.search);
    assert.equal((page2.body.results as { name: string }[])[0]!.name, 'q09');
    assert.equal((await s.call('GET', '/api/pool?created_by=npl-lb-c1')).body.count, 16);
    assert.equal((await s.call('GET', '/api/pool?name=q03')).body.count, 1);
    assert.equal(
      (await s.call('GET', '/api/healthmonitor?name=System-HTTP')).body.count,
      1,
      'System-* pre-seeded',
    );
    await s.call('POST', '/api/vsvip', {
      name: 'v',
      vip: [{ vip_id: '0', ip_address: { addr: '192.0.2.10', type: 'V4' } }],
    });
    const vs = await s.call('POST', '/api/virtualservice', {
      name: 'vs1',
      vsvip_ref: '/api/vsvip?name=v',
      pool_ref: '/api/pool?name=p',
      services: [{ port: 80 }],
      application_profile_ref: '/api/applicationprofile?name=System-L4-Application',
    });
    assert.equal(vs.status, 201);
    const refused = await s.call('DELETE', `/api/pool/${String(created.body.uuid)}`);
    assert.equal(refused.status, 400);
    assert.match(String(refused.body.error), /referred by: \['VirtualService vs1'\]/);
    s.sim.faults.referencedDeleteStatus = 403;
    assert.equal((await s.call('DELETE', `/api/pool/${String(created.body.uuid)}`)).status, 403);
    s.sim.faults.referencedDeleteStatus = 400;
    const stale = await s.call('PUT', `/api/pool/${String(created.body.uuid)}`, {
      ...pool('p'),
      _last_modified: '1',
    });
    assert.equal(stale.status, 412);
    const fresh = await s.call('PUT', `/api/pool/${String(created.body.uuid)}`, {
      ...pool('p'),
      _last_modified: created.body._last_modified,
    });
    assert.equal(fresh.status, 200);
    assert.notEqual(fresh.body._last_modified, created.body._last_modified, 'changes on every write');
    assert.equal((await s.call('DELETE', `/api/virtualservice/${String(vs.body.uuid)}`)).status, 204);
    assert.equal((await s.call('DELETE', `/api/pool/${String(created.body.uuid)}`)).status, 204);
    assert.equal((await s.call('DELETE', `/api/pool/${String(created.body.uuid)}`)).status, 404);
  });

  it('latency: a call takes latencyMs in all, its work done at once and its answer (a refusal too) held until then; in flight until answered; no session, no wait', async (t) => {
    const s = await started(t);
    assert.equal(await s.login(), 200);
    s.sim.faults.latencyMs = 150;
    const timed = async (f: () => Promise<{ status: number }>) => {
      const t0 = performance.now();
      const r = await f();
      return { status: r.status, ms: performance.now() - t0, sent: t0 };
    };
    // Four at once: each answers no sooner than 150 ms, and all four are in flight together.
    const four = await Promise.all(
      [1, 2, 3, 4].map((i) => timed(() => s.call('POST', '/api/pool', pool(`lat-${i}`)))),
    );
    for (const r of four) {
      assert.equal(r.status, 201);
      assert.ok(r.ms >= 149, `answered after ${r.ms} ms`);
    }
    assert.equal(s.sim.stats.maxInflight, 4);
    // The write is logged as answered: at the end of its latency, not when it was done.
    for (const w of s.sim.writeLog.slice(-4)) assert.ok(w.at >= Math.min(...four.map((r) => r.sent)) + 149);
    // A refused write waits as long (the refusal is the controller's answer after its work).
    s.sim.faults.failWrites = 1;
    const refused = await timed(() => s.call('POST', '/api/pool', pool('lat-5')));
    assert.equal(refused.status, 503);
    assert.ok(refused.ms >= 149, `refused after ${refused.ms} ms`);
    assert.equal(s.sim.objects('pool').has('lat-5'), false);
    // Without a session the answer does not wait for the latency of an API call.
    s.sim.expireSessions();
    s.sim.faults.latencyMs = 5_000;
    const unauthenticated = await timed(() => s.call('GET', '/api/pool'));
    assert.equal(unauthenticated.status, 401);
    assert.ok(unauthenticated.ms < 5_000);
  });
});
