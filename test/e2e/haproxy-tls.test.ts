/**
 * TLS on a real HAProxy, on both transports (runtime, and the Data Plane API v2 and v3 on the
 * simulator), with real handshakes: TLS passthrough routed by the ClientHello's SNI to backends
 * that terminate TLS themselves (checked by the certificate the backend served, end to end), and
 * HTTPS termination picking the certificate by SNI (checked by fingerprint), a rotation under a
 * bounded request loop with 0 failed requests and 0 reloads, and a certificate the listener gains
 * or loses (at runtime where the transport has a runtime crt-list: runtime, Data Plane v3; one
 * reload on v2). A certificate whose key does not match is refused alone, with its reason.
 */
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { connect as tlsConnect, createServer as createTlsServer } from 'node:tls';
import { describe, it, type TestContext } from 'node:test';
import { Agent, request } from 'undici';
import { guardOwnership } from '../../src/adapter/ownership.ts';
import { resolveConnection } from '../../src/model/http-match.ts';
import type { Certificate, L4VirtualService, L7VirtualService, Pool } from '../../src/model/types.ts';
import { plan } from '../../src/plan/diff.ts';
import { modelCertificate, testCertificate } from '../support/certs.ts';
import { assertNoListeners, haproxyMissing } from '../support/haproxy.ts';
import { TRANSPORTS } from '../support/haproxy-transports.ts';

/** The test's certificates are self-signed: what is served is checked by fingerprint instead. */
const insecure = new Agent({ connect: { rejectUnauthorized: false, servername: 'b.example.com' } });
const ECHO = { ip: '127.0.43.11', port: 18121 };
const ECHO_POOL = 'e2e--gw-web-8080.l7';

/** An HTTP backend answering with a fixed body. */
async function echo(t: TestContext): Promise<void> {
  const server = createServer((_req, res) => res.end('web\n'));
  await new Promise<void>((r) => server.listen(ECHO.port, ECHO.ip, () => r()));
  t.after(() => new Promise<void>((r) => server.close(() => r())));
}

const webPool: Pool = {
  name: ECHO_POOL,
  protocol: 'TCP',
  health: 'http',
  service: 'gw/web',
  servicePort: '8080',
  members: [{ address: ECHO.ip, port: ECHO.port, node: 'n1', pod: 'gw/web-0', enabled: true }],
};

for (const tr of TRANSPORTS) {
  describe(
    `TLS passthrough on a real HAProxy (${tr.name}), held to the model`,
    { skip: haproxyMissing() },
    () => {
      it('routes by SNI to backends that terminate TLS themselves: exact over wildcard over any; no match refused', async (t) => {
        const PT = 18443;
        assertNoListeners('127.0.42.', [PT]);
        const backends = {
          exact: ['127.0.42.11', 18111, 'exact.example.com'],
          wild: ['127.0.42.12', 18112, '*.example.com'],
        } as const;
        for (const [name, [ip, port, dns]] of Object.entries(backends)) {
          const c = await testCertificate({ dns: [dns] });
          const server = createTlsServer({ cert: c.cert, key: c.key }, (s) => s.end(`${name}\n`));
          await new Promise<void>((r) => server.listen(port, ip, () => r()));
          t.after(() => new Promise<void>((r) => server.close(() => r())));
        }
        const tcpPool = (name: keyof typeof backends): Pool => ({
          name: `e2e--gw-tls-${name}-443`,
          protocol: 'TCP',
          health: 'tcp',
          service: `gw/${name}`,
          servicePort: '443',
          members: [
            {
              address: backends[name][0],
              port: backends[name][1],
              node: 'n1',
              pod: `gw/${name}-0`,
              enabled: true,
            },
          ],
        });
        const tls: L4VirtualService = {
          kind: 'l4',
          name: 'e2e--gw-gw.gw-TLS-443',
          vip: '127.0.42.1',
          port: PT,
          protocol: 'TCP',
          pool: '',
          source: 'Gateway gw/gw',
          sni: [
            { host: '*.example.com', pool: tcpPool('wild').name, source: 'TLSRoute gw/wild' },
            { host: 'exact.example.com', pool: tcpPool('exact').name, source: 'TLSRoute gw/exact' },
          ],
        };
        const rig = await tr.start(t);
        const adapter = guardOwnership(rig.adapter);
        const state = { pools: [tcpPool('exact'), tcpPool('wild')], virtualServices: [tls] };
        const results = await adapter.apply(plan(state, await adapter.observe()).changes);
        assert.deepEqual(
          results.filter((x) => !x.ok).map((x) => x.error?.message),
          [],
        );
        assert.deepEqual(plan(state, await adapter.observe()).changes, [], 'observed back exactly');

        /** Which backend answered a ClientHello naming `sni`, and for which name its certificate is. */
        const hello = (sni: string) =>
          new Promise<{ body: string; cert: string } | 'refused'>((resolve) => {
            const s = tlsConnect({
              host: '127.0.42.1',
              port: PT,
              servername: sni,
              rejectUnauthorized: false,
            });
            let body = '';
            let cert = '';
            s.on('secureConnect', () => (cert = String(s.getPeerCertificate().subjectaltname ?? '')));
            s.on('data', (d: Buffer) => (body += d.toString()));
            // No TLS session with a backend: refused.
            s.on('end', () => resolve(cert === '' ? 'refused' : { body: body.trim(), cert }));
            s.on('error', () => resolve('refused'));
            s.setTimeout(3000, () => {
              s.destroy();
              resolve('refused');
            });
          });
        for (const sni of ['exact.example.com', 'a.example.com', 'a.b.example.com', 'other.org']) {
          const want = resolveConnection(tls, sni);
          const got = await hello(sni);
          if (want === undefined) assert.equal(got, 'refused', `${sni}: refused`);
          else {
            assert.notEqual(got, 'refused', `${sni}: served`);
            const name = want === tcpPool('exact').name ? 'exact' : 'wild';
            assert.equal(got !== 'refused' && got.body, name, `${sni}: backend`);
            assert.match(
              got !== 'refused' ? got.cert : '',
              new RegExp(backends[name][2].replace('*', '\\*')),
              `${sni}: its own certificate, end to end`,
            );
          }
        }

        // No route left (their backends gone): the listener still listens and closes each
        // connection after its ClientHello (reset or end), never refusing the TCP connection.
        const closedAll = { ...tls, sni: [] };
        const none = { pools: [], virtualServices: [closedAll] };
        const r2 = await adapter.apply(plan(none, await adapter.observe()).changes);
        assert.deepEqual(
          r2.filter((x) => !x.ok).map((x) => x.error?.message),
          [],
        );
        assert.deepEqual(plan(none, await adapter.observe()).changes, [], 'observed back exactly');
        const fate = (sni: string) =>
          new Promise<string>((resolve) => {
            const s = tlsConnect({
              host: '127.0.42.1',
              port: PT,
              servername: sni,
              rejectUnauthorized: false,
            });
            s.on('secureConnect', () => resolve('served'));
            s.on('error', (e: NodeJS.ErrnoException) =>
              resolve(e.code === 'ECONNREFUSED' ? 'refused' : 'closed'),
            );
            s.on('end', () => resolve('closed'));
            s.setTimeout(3000, () => {
              s.destroy();
              resolve('timeout');
            });
          });
        for (const sni of ['exact.example.com', 'other.org']) assert.equal(await fate(sni), 'closed', sni);
      });
    },
  );

  describe(`HTTPS termination on a real HAProxy (${tr.name})`, { skip: haproxyMissing() }, () => {
    it('picks the certificate by SNI (the first for no SNI); a rotated certificate goes live under load with 0 reloads and 0 failed requests', async (t) => {
      const HP = 18444;
      assertNoListeners('127.0.43.', [HP]);
      await echo(t);
      const made = modelCertificate;
      const a = await made('e2e--gw.a-tls', ['a.example.com']);
      const b = await made('e2e--gw.b-tls', ['b.example.com']);
      const https: L7VirtualService = {
        kind: 'l7',
        name: 'e2e--gw-gw.gw-HTTPS-443',
        vip: '127.0.43.1',
        port: HP,
        ingressClass: 'npl-lb',
        defaultPool: undefined,
        protocol: 'HTTPS',
        certificates: [a.name, b.name],
        routes: [
          { host: '', path: '/', pathType: 'Prefix', pool: ECHO_POOL, source: 'HTTPRoute gw/r', order: 0 },
        ],
      };
      const rig = await tr.start(t);
      const adapter = guardOwnership(rig.adapter);
      const sync = async (certificates: Certificate[], vs: L7VirtualService = https) => {
        const s = { pools: [webPool], virtualServices: [vs], certificates };
        const p = plan(s, await adapter.observe());
        const r = await adapter.apply(p.changes);
        assert.deepEqual(
          r.filter((x) => !x.ok).map((x) => x.error?.message),
          [],
        );
        assert.deepEqual(plan(s, await adapter.observe()).changes, [], 'observed back exactly');
        return p.changes.map((c) => `${c.op} ${c.kind}`);
      };
      await sync([a, b]);
      const served = (servername?: string) =>
        new Promise<string>((resolve, reject) => {
          const s = tlsConnect({
            host: '127.0.43.1',
            port: HP,
            ...(servername ? { servername } : {}),
            rejectUnauthorized: false,
          });
          s.on('secureConnect', () => {
            resolve(s.getPeerCertificate().fingerprint256);
            s.destroy();
          });
          s.on('error', reject);
        });
      assert.equal(await served('a.example.com'), a.fingerprint);
      assert.equal(await served('b.example.com'), b.fingerprint);
      assert.equal(await served(), a.fingerprint, 'no SNI: the first certificate');

      // Rotation under a bounded request loop: the new certificate is served, nothing failed, no reload.
      const reloads = rig.reloads();
      let failed = 0;
      let ok = 0;
      let stop = false;
      const until = Date.now() + 10_000;
      const load = (async () => {
        while (!stop && Date.now() < until) {
          try {
            const res = await request(`https://127.0.43.1:${HP}/`, {
              headers: { host: 'b.example.com' },
              dispatcher: insecure,
            });
            await res.body.text();
            if (res.statusCode === 200) ok++;
            else failed++;
          } catch {
            failed++;
          }
        }
      })();
      await new Promise((r) => setTimeout(r, 200));
      const b2 = await made(b.name, ['b.example.com']);
      assert.deepEqual(await sync([a, b2]), ['update certificate'], 'the certificate alone');
      await new Promise((r) => setTimeout(r, 200));
      stop = true;
      await load;
      assert.equal(await served('b.example.com'), b2.fingerprint, 'the rotated certificate is served');
      assert.equal(rig.reloads(), reloads, 'no reload');
      assert.equal(failed, 0, `${failed} failed of ${ok + failed}`);
      assert.ok(ok > 0);

      // A certificate the frontend gains, then one it loses: at runtime too (crt-list), no reload.
      const c = await made('e2e--gw.c-tls', ['c.example.com']);
      assert.deepEqual(await sync([a, b2, c], { ...https, certificates: [a.name, b.name, c.name] }), [
        'create certificate',
        'update virtualService',
      ]);
      assert.equal(await served('c.example.com'), c.fingerprint, 'the new certificate is served');
      assert.deepEqual(await sync([a, c], { ...https, certificates: [a.name, c.name] }), [
        'update virtualService',
        'delete certificate',
      ]);
      assert.equal(await served('b.example.com'), a.fingerprint, 'a name no longer held gets the default');
      assert.equal(await served('c.example.com'), c.fingerprint);
      assert.equal(
        rig.reloads(),
        reloads + (tr.runtimeCrtList ? 0 : 2),
        'no reload (v2: one per crt-list change)',
      );
      // After a reload (as a restart would make), the same is served: the files are in step.
      await rig.reload();
      assert.equal(await served('c.example.com'), c.fingerprint);
      assert.equal(await served('b.example.com'), a.fingerprint);

      // A certificate whose key does not match: refused alone, with its reason; the listener keeps serving.
      const other = await made('e2e--gw.d-tls', ['d.example.com']);
      const bad = { ...other, keyPem: a.keyPem };
      const s = {
        pools: [webPool],
        virtualServices: [{ ...https, certificates: [a.name, c.name] }],
        certificates: [a, c, bad],
      };
      const p = plan(s, await adapter.observe());
      const results = await adapter.apply(p.changes);
      const refused = results.filter((x) => !x.ok);
      assert.equal(refused.length, 1, JSON.stringify(results.map((x) => [x.change.name, x.ok])));
      assert.equal(refused[0]!.change.name, bad.name);
      assert.match(refused[0]!.error!.message, /key/i);
      assert.equal(await served('a.example.com'), a.fingerprint, 'the listener keeps its certificates');
      assert.deepEqual(rig.specProblems(), [], 'every Data Plane exchange conforms to the spec');
    });
  });
}
