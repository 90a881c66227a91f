/**
 * The Data Plane API simulator's semantics on a real HAProxy, in v2 and v3: auth, the version
 * counter (409), transactions (201, 202/200 on commit, 406 when outdated, 204 on delete), errors
 * as {code, message}, v2's wrapped reads and v3's Configuration-Version header, `haproxy -c`
 * refusing a bad commit; a server repointed through the REST API moves real traffic without a
 * reload, a new frontend reloads. Every exchange is held to the official spec.
 */
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { describe, it, type TestContext } from 'node:test';
import { request } from 'undici';
import type { ApiVersion } from '../../adapters/haproxy/dataplane/models.ts';
import { specFor, startDataplaneSim } from '../support/dataplane.ts';
import { haproxyMissing } from '../support/haproxy.ts';

const AUTH = `Basic ${Buffer.from('admin:admin').toString('base64')}`;

async function backendServer(t: TestContext, ip: string, answer: string): Promise<number> {
  const s = createServer((_q, r) => r.end(answer));
  await new Promise<void>((r) => s.listen(0, ip, () => r()));
  t.after(() => new Promise<void>((r) => s.close(() => r())));
  return (s.address() as { port: number }).port;
}

function client(base: string, v: ApiVersion) {
  return async (method: string, path: string, body?: unknown, auth = AUTH) => {
    const r = await request(`${base}/${v}${path}`, {
      method: method as 'GET',
      headers: { authorization: auth, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    });
    const text = await r.body.text();
    return {
      status: r.statusCode,
      body: text ? (JSON.parse(text) as unknown) : undefined,
      headers: r.headers,
    };
  };
}

// A new connection per request: in tcp mode a kept-alive connection stays with its server.
const get = async (url: string) =>
  (await (await request(url, { headersTimeout: 3000, reset: true })).body.text()).trim();

for (const v of ['v2', 'v3'] as ApiVersion[]) {
  describe(`Data Plane API simulator ${v}`, { skip: haproxyMissing() }, () => {
    it('versions, transactions, errors; a repointed server moves traffic without a reload', async (t) => {
      const rig = await startDataplaneSim(t);
      const call = client(rig.url, v);
      const a = await backendServer(t, '127.0.0.1', 'A');
      const b = await backendServer(t, '127.0.0.1', 'B');
      const port = v === 'v2' ? 18191 : 18192;
      const data = (r: { body: unknown }) => (v === 'v2' ? (r.body as { data: unknown }).data : r.body);
      const servers = (name: string) =>
        v === 'v2'
          ? `/services/haproxy/configuration/servers?backend=${name}`
          : `/services/haproxy/configuration/backends/${name}/servers`;
      const binds = (name: string) =>
        v === 'v2'
          ? `/services/haproxy/configuration/binds?frontend=${name}`
          : `/services/haproxy/configuration/frontends/${name}/binds`;
      const q = (path: string, p: string) => `${path}${path.includes('?') ? '&' : '?'}${p}`;

      assert.equal(
        (await call('GET', '/services/haproxy/configuration/version', undefined, 'Basic eDp5')).status,
        401,
      );
      const version = (await call('GET', '/services/haproxy/configuration/version')).body as number;
      assert.equal(typeof version, 'number');

      // A stale version is refused (direct write and transaction), with {code, message}.
      const stale = await call('POST', `/services/haproxy/configuration/backends?version=${version + 5}`, {
        name: 'x',
      });
      assert.equal(stale.status, 409);
      assert.equal((stale.body as { code: number }).code, 409);
      assert.match((stale.body as { message: string }).message, /version/);
      assert.equal((await call('POST', `/services/haproxy/transactions?version=${version + 5}`)).status, 409);
      const noVersion = await call('POST', '/services/haproxy/configuration/backends', { name: 'x' });
      assert.equal(noVersion.status, 400);

      // A transaction builds a backend, a frontend and its bind; the commit reloads.
      const tx = await call('POST', `/services/haproxy/transactions?version=${version}`);
      assert.equal(tx.status, 201);
      const id = (tx.body as { id: string; status: string }).id;
      assert.equal((tx.body as { status: string }).status, 'in_progress');
      const t1 = `transaction_id=${id}`;
      const bad = await call('POST', `/services/haproxy/configuration/backends?${t1}`, { name: 'has space' });
      assert.equal(bad.status, 400, 'an invalid name is refused');
      assert.equal(
        (
          await call('POST', `/services/haproxy/configuration/backends?${t1}`, {
            name: 'app',
            mode: 'tcp',
            balance: { algorithm: 'roundrobin' },
          })
        ).status,
        202,
      );
      assert.equal(
        (await call('POST', q(servers('app'), t1), { name: 'srv1', address: '127.0.0.1', port: a })).status,
        202,
      );
      assert.equal(
        (
          await call('POST', `/services/haproxy/configuration/frontends?${t1}`, {
            name: 'web',
            mode: 'tcp',
            default_backend: 'app',
          })
        ).status,
        202,
      );
      assert.equal(
        (await call('POST', q(binds('web'), t1), { name: 'vip', address: '127.0.0.1', port })).status,
        202,
      );
      // Not visible outside the transaction before the commit.
      assert.deepEqual(data(await call('GET', '/services/haproxy/configuration/backends')), []);
      const commit = await call('PUT', `/services/haproxy/transactions/${id}`);
      assert.equal(commit.status, 202);
      const reloadId = commit.headers['reload-id'] as string;
      assert.match(reloadId, /^\d{4}-\d{2}-\d{2}-\d+$/);
      for (let i = 0; i < 100; i++) {
        const r = await call('GET', `/services/haproxy/reloads/${reloadId}`);
        if ((r.body as { status: string }).status === 'succeeded') break;
        await new Promise((res) => setTimeout(res, 50));
      }
      assert.equal(
        ((await call('GET', `/services/haproxy/reloads/${reloadId}`)).body as { status: string }).status,
        'succeeded',
      );
      assert.equal(await get(`http://127.0.0.1:${port}/`), 'A');

      // Reads: v2 wraps them, v3 gives the version in a header.
      const list = await call('GET', '/services/haproxy/configuration/backends');
      if (v === 'v2') assert.equal((list.body as { _version: number })._version, version + 1);
      else assert.equal(list.headers['configuration-version'], String(version + 1));

      // An outdated transaction cannot commit (406); a deleted one is gone (204, then 404).
      const old = (await call('POST', `/services/haproxy/transactions?version=${version + 1}`)).body as {
        id: string;
      };
      const other = (await call('POST', `/services/haproxy/transactions?version=${version + 1}`)).body as {
        id: string;
      };
      const srv1 =
        v === 'v2'
          ? `/services/haproxy/configuration/servers/srv1?backend=app&transaction_id=${old.id}`
          : `/services/haproxy/configuration/backends/app/servers/srv1?transaction_id=${old.id}`;
      assert.equal((await call('PUT', srv1, { name: 'srv1', address: '127.0.0.1', port: b })).status, 202);
      assert.equal(
        (await call('PUT', `/services/haproxy/transactions/${old.id}`)).status,
        200,
        'a server move commits without a reload',
      );
      assert.equal(await get(`http://127.0.0.1:${port}/`), 'B', 'the repointed server carries the traffic');
      const outdated = await call('PUT', `/services/haproxy/transactions/${other.id}`);
      assert.equal(outdated.status, 406);
      assert.equal((outdated.body as { code: number }).code, 406);
      const third = (await call('POST', `/services/haproxy/transactions?version=${version + 2}`)).body as {
        id: string;
      };
      assert.equal((await call('DELETE', `/services/haproxy/transactions/${third.id}`)).status, 204);
      assert.equal((await call('GET', `/services/haproxy/transactions/${third.id}`)).status, 404);
      assert.equal(rig.sim.stats.reloads, 1, 'only the structural commit reloaded');

      // `haproxy -c` guards commits: a switching rule to a backend that does not exist is refused.
      const t4 = (await call('POST', `/services/haproxy/transactions?version=${version + 2}`)).body as {
        id: string;
      };
      const rules =
        v === 'v2'
          ? `/services/haproxy/configuration/backend_switching_rules?frontend=web&transaction_id=${t4.id}`
          : `/services/haproxy/configuration/frontends/web/backend_switching_rules/0?transaction_id=${t4.id}`;
      await call('POST', rules, {
        ...(v === 'v2' ? { index: 0 } : {}),
        name: 'nowhere',
        cond: 'if',
        cond_test: 'TRUE',
      });
      const refused = await call('PUT', `/services/haproxy/transactions/${t4.id}`);
      assert.equal(refused.status, 400);
      assert.match((refused.body as { message: string }).message, /haproxy -c/);
      assert.equal(await get(`http://127.0.0.1:${port}/`), 'B', 'still serving');

      // A move HAProxy refuses at runtime (static-rr takes weights 0 or 100% only) falls back to a
      // reload, which brings HAProxy to the file.
      const t5 = (await call('POST', `/services/haproxy/transactions?version=${version + 2}`)).body as {
        id: string;
      };
      const tq = `transaction_id=${t5.id}`;
      await call('POST', `/services/haproxy/configuration/backends?${tq}`, {
        name: 'static',
        mode: 'tcp',
        balance: { algorithm: 'static-rr' },
      });
      await call('POST', q(servers('static'), tq), { name: 'st1', address: '127.0.0.1', port: a, weight: 1 });
      const made = rig.sim.stats.reloads;
      assert.equal((await call('PUT', `/services/haproxy/transactions/${t5.id}`)).status, 202);
      // The backend's reload done first, so that the weight change meets the running HAProxy.
      for (let i = 0; i < 100 && rig.sim.stats.reloads === made; i++) {
        await new Promise((res) => setTimeout(res, 50));
      }
      const reloadsBefore = rig.sim.stats.reloads;
      const st1 =
        v === 'v2'
          ? `/services/haproxy/configuration/servers/st1?backend=static&version=${version + 3}`
          : `/services/haproxy/configuration/backends/static/servers/st1?version=${version + 3}`;
      const moved = await call('PUT', st1, { name: 'st1', address: '127.0.0.1', port: a, weight: 5 });
      assert.equal(moved.status, 202, 'refused at runtime: reloaded instead');
      for (let i = 0; i < 100 && rig.sim.stats.reloads === reloadsBefore; i++) {
        await new Promise((res) => setTimeout(res, 50));
      }
      const weight = (await rig.sim.proc.runtime('show servers state static'))
        .split('\n')
        .find((l) => / st1 /.test(l));
      assert.equal(weight?.split(' ')[7], '5', `HAProxy runs the weight of the file: ${weight}`);

      // Every exchange but the deliberately invalid request conforms to the spec.
      const invalid = (x: { requestBody: unknown }) =>
        (x.requestBody as { name?: string } | undefined)?.name === 'has space';
      assert.equal(rig.exchanges.filter(invalid).length, 1);
      assert.deepEqual(
        rig.exchanges.filter((x) => !invalid(x)).flatMap((x) => specFor(v).check(x)),
        [],
      );
      // The checker does see a departure from the spec.
      const probe = specFor(v).check({
        method: 'POST',
        path: `/${v}/services/haproxy/configuration/backends`,
        query: { version: '1', bogus: '1' },
        requestBody: { name: 'x', mode: 'nonsense' },
        status: 201,
        responseBody: { name: 'x' },
        headers: {},
      });
      assert.equal(probe.length, 2, probe.join('; '));
    });
  });
}
