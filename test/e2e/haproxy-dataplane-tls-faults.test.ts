/**
 * Certificates on the Data Plane transport, tried adversarially, in v2 and v3 on the simulator over
 * a real HAProxy: the storage endpoints refuse a file HAProxy would refuse (400, nothing written), a
 * name that is not a plain file name, a crt-list the configuration still names (409), and v2 has no
 * `ssl_crt_lists`; what npl-lb writes is mode 600 in directories of mode 700. An API that fails
 * during a rotation fails the certificate alone as retryable, the old certificate stays served, and
 * the retry rotates it. A restarted controller makes no write, certificates included; another
 * cluster's certificate is reported foreign and never touched.
 */
import assert from 'node:assert/strict';
import { X509Certificate } from 'node:crypto';
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { connect as tlsConnect } from 'node:tls';
import { describe, it } from 'node:test';
import { FormData, request } from 'undici';
import { DpError } from '../../sim/haproxy-dataplane/config-crud.ts';
import type { ApiVersion } from '../../adapters/haproxy/dataplane/models.ts';
import { guardOwnership } from '../../src/adapter/ownership.ts';
import type { L7VirtualService, LbState, Pool } from '../../src/model/types.ts';
import { plan } from '../../src/plan/diff.ts';
import { modelCertificate } from '../support/certs.ts';
import { startDataplaneSim } from '../support/dataplane.ts';
import { assertNoListeners, haproxyMissing } from '../support/haproxy.ts';
import * as kit from '../support/model.ts';

const AUTH = `Basic ${Buffer.from('admin:admin').toString('base64')}`;
const VIP = '127.0.43.1';

const made = modelCertificate;

const served = (port: number, servername: string) =>
  new Promise<string>((resolve, reject) => {
    const s = tlsConnect({ host: VIP, port, servername, rejectUnauthorized: false });
    s.on('secureConnect', () => {
      resolve(s.getPeerCertificate().fingerprint256);
      s.destroy();
    });
    s.on('error', reject);
  });

const pool = (owner: string): Pool =>
  kit.pool(`${owner}--gw-web-8080.l7`, [kit.member('127.0.43.11', 18131, { pod: 'gw/web-0' })], {
    health: 'http',
    service: 'gw/web',
    servicePort: '8080',
  });

const httpsVs = (owner: string, port: number, certificates: string[]): L7VirtualService => ({
  kind: 'l7',
  name: `${owner}--gw-gw.gw-HTTPS-443`,
  vip: VIP,
  port,
  ingressClass: 'npl-lb',
  defaultPool: undefined,
  protocol: 'HTTPS',
  certificates,
  routes: [
    { host: '', path: '/', pathType: 'Prefix', pool: pool(owner).name, source: 'HTTPRoute gw/r', order: 0 },
  ],
});

for (const [i, v] of (['v2', 'v3'] as ApiVersion[]).entries()) {
  describe(`Data Plane API ${v}: certificates under bad input and faults`, { skip: haproxyMissing() }, () => {
    it('storage refuses what HAProxy would, keeps files private, and v2 has no ssl_crt_lists', async (t) => {
      const port = 18450 + i * 2;
      assertNoListeners('127.0.43.', [port]);
      const rig = await startDataplaneSim(t);
      const base = `${rig.url}/${v}/services/haproxy/storage`;
      const call = async (method: string, path: string, body?: FormData | string) => {
        const r = await request(`${base}${path}`, {
          method: method as 'GET',
          headers: {
            authorization: AUTH,
            ...(typeof body === 'string' ? { 'content-type': 'text/plain' } : {}),
          },
          ...(body !== undefined ? { body } : {}),
        });
        const text = await r.body.text();
        return { status: r.statusCode, text };
      };
      const upload = (filename: string, content: string) => {
        const f = new FormData();
        f.append('file_upload', new Blob([content]), filename);
        return f;
      };
      const a = await made('x--a-tls', ['a.example.com']);
      const b = await made('x--b-tls', ['b.example.com']);

      // A key that does not match, no key, garbage: 400 with the reason, nothing written.
      for (const [content, reason] of [
        [`${a.certPem}${b.keyPem}`, /does not match/],
        [a.certPem, /no private key/],
        ['not a certificate', /no certificate/],
      ] as const) {
        const r = await call('POST', '/ssl_certificates', upload('bad.pem', content));
        assert.equal(r.status, 400, r.text);
        assert.match(r.text, reason);
      }
      // A name that is not a plain file name never reaches the file system.
      for (const name of ['../escape.pem', 'a b.pem', '.hidden/..']) {
        const r = await call('POST', '/ssl_certificates', upload(name, `${a.certPem}${a.keyPem}`));
        assert.equal(r.status, 400, `${name}: ${r.text}`);
      }
      assert.equal((await call('GET', '/ssl_certificates')).text.trim(), '[]', 'nothing written');
      // A replacement that HAProxy would refuse leaves the file as it was.
      assert.equal(
        (await call('POST', '/ssl_certificates', upload('ok.pem', `${a.certPem}${a.keyPem}`))).status,
        201,
      );
      const put = await call('PUT', '/ssl_certificates/ok.pem?skip_reload=true', `${b.certPem}${a.keyPem}`);
      assert.equal(put.status, 400, put.text);
      const kept = JSON.parse((await call('GET', '/ssl_certificates/ok.pem')).text) as { serial: string };
      assert.equal(kept.serial, new X509Certificate(a.certPem).serialNumber, 'the file as it was');
      assert.equal((await call('DELETE', '/ssl_certificates/ok.pem?skip_reload=true')).status, 204);
      assert.equal((await call('GET', '/ssl_certificates/ok.pem')).status, 404);

      const crtLists = await call('GET', '/ssl_crt_lists');
      assert.equal(crtLists.status, v === 'v2' ? 404 : 200, `ssl_crt_lists in ${v}: ${crtLists.text}`);

      // What the adapter writes: files of mode 600 in directories of mode 700.
      const adapter = guardOwnership(rig.adapter('c1', v));
      const c1 = await made('c1--gw.a-tls', ['a.example.com']);
      const s: LbState = {
        pools: [pool('c1')],
        virtualServices: [httpsVs('c1', port, [c1.name])],
        certificates: [c1],
      };
      const r = await adapter.apply(plan(s, await adapter.observe()).changes);
      assert.deepEqual(
        r.filter((x) => !x.ok).map((x) => x.error?.message),
        [],
      );
      const root = join(rig.dir, 'storage');
      for (const area of readdirSync(root)) {
        assert.equal(statSync(join(root, area)).mode & 0o777, 0o700, area);
        for (const f of readdirSync(join(root, area))) {
          assert.equal(statSync(join(root, area, f)).mode & 0o777, 0o600, `${area}/${f}`);
        }
      }
      // The crt-list is what the configuration names: it cannot be deleted from under it. (A
      // certificate file named only in the crt-list can, as in dataplaneapi: the adapter drops it
      // from the crt-list first.)
      const listPath = v === 'v3' ? '/ssl_crt_lists' : '/general';
      const del = await call(
        'DELETE',
        `${listPath}/${s.virtualServices[0]!.name}.crtlist${v === 'v3' ? '?skip_reload=true' : ''}`,
      );
      assert.equal(del.status, 409, del.text);
      assert.match(del.text, /referenced/);
      assert.equal(await served(port, 'a.example.com'), c1.fingerprint, 'still served');
      assert.deepEqual(
        rig.specProblems(),
        v === 'v2' ? ['GET /v2/services/haproxy/storage/ssl_crt_lists: no such path in the v2 spec'] : [],
        'every exchange but the probe of what v2 lacks conforms to the spec',
      );
    });

    it('a failing API during rotation fails the certificate alone, retryable; a restart writes nothing; another cluster’s certificate is foreign', async (t) => {
      const port = 18451 + i * 2;
      assertNoListeners('127.0.43.', [port]);
      let failStorage = false;
      const rig = await startDataplaneSim(t, {
        beforeRequest: async (method, path) => {
          if (failStorage && method !== 'GET' && path.includes('/storage/')) {
            throw new DpError(503, 'storage unavailable');
          }
        },
      });
      const first = guardOwnership(rig.adapter('c1', v));
      const c1 = await made('c1--gw.a-tls', ['a.example.com']);
      const s: LbState = {
        pools: [pool('c1')],
        virtualServices: [httpsVs('c1', port, [c1.name])],
        certificates: [c1],
      };
      const sync = async (a: typeof first, state: LbState) => {
        const changes = plan(state, await a.observe()).changes;
        return { changes, results: await a.apply(changes) };
      };
      assert.deepEqual(
        (await sync(first, s)).results.filter((x) => !x.ok),
        [],
      );
      assert.equal(await served(port, 'a.example.com'), c1.fingerprint);

      // Rotation while the storage answers 503: the certificate alone fails, retryable.
      const rotated = await made(c1.name, ['a.example.com']);
      const s2 = { ...s, certificates: [rotated] };
      failStorage = true;
      const failing = await sync(first, s2);
      assert.deepEqual(
        failing.results.map((x) => `${x.change.op} ${x.change.kind} ${x.ok} ${x.error?.terminal}`),
        ['update certificate false false'],
      );
      assert.equal(
        await served(port, 'a.example.com'),
        c1.fingerprint,
        'the old certificate is still served',
      );
      failStorage = false;
      const retry = await sync(first, s2);
      assert.deepEqual(
        retry.results.map((x) => `${x.change.op} ${x.change.kind} ${x.ok}`),
        ['update certificate true'],
      );
      assert.equal(await served(port, 'a.example.com'), rotated.fingerprint, 'the retry rotated it');

      // Another cluster on the same device, with identical Gateway and Secret names.
      const other = guardOwnership(rig.adapter('c2', v));
      const c2 = await made('c2--gw.a-tls', ['a.example.com']);
      const o: LbState = {
        pools: [pool('c2')],
        virtualServices: [httpsVs('c2', port + 100, [c2.name])],
        certificates: [c2],
      };
      assertNoListeners('127.0.43.', [port + 100]);
      assert.deepEqual(
        (await sync(other, o)).results.filter((x) => !x.ok),
        [],
      );

      // A restart: a new adapter rebuilds everything from the device and writes nothing.
      await first.close();
      const writes = () => rig.exchanges.filter((x) => x.method !== 'GET').length;
      const before = writes();
      const second = guardOwnership(rig.adapter('c1', v));
      const seen = await second.observe();
      assert.deepEqual(plan(s2, seen).changes, [], 'nothing to write after a restart');
      assert.deepEqual(
        seen.owned.certificates?.map((c) => c.fingerprint),
        [rotated.fingerprint],
      );
      assert.ok(
        seen.foreign.some((f) => f.kind === 'certificate' && f.name === c2.name && f.owner === 'c2'),
        JSON.stringify(seen.foreign),
      );
      assert.equal(writes(), before, 'no write');
      // Starting from empty (deleteConfig) leaves the other cluster's certificate served.
      const empty = await second.apply(
        plan({ pools: [], virtualServices: [], certificates: [] }, seen).changes,
      );
      assert.deepEqual(
        empty.filter((x) => !x.ok).map((x) => x.error?.message),
        [],
      );
      assert.equal(await served(port + 100, 'a.example.com'), c2.fingerprint);
      assert.deepEqual(
        (await other.observe()).owned.certificates?.map((c) => c.name),
        [c2.name],
      );
      assert.deepEqual(rig.specProblems(), []);
    });
  });
}
