/**
 * Issue 48, item 2 (an Ingress's `npl-lb.io/client-ca`): client certificates asked for one host of
 * a shared HTTPS frontend alone, on a real HAProxy with real handshakes, every transport (a
 * crt-list line of the host's own with `[ca-file ... verify required]`: a file on the runtime
 * transport, the Data Plane API's storage on the simulator). The host asking: a client
 * of the CA served, one of another CA or with none fails at the handshake, nothing reaches the
 * member. The host beside it serves clients without certificates. The bypass tries: a handshake
 * for the open host (or without a server name) carrying the asking host's Host header is answered
 * 421, never served. Through changes: the CA rotated; the crt-list line edited by hand on the
 * device (`verify none`) is seen and written again; the validation removed serves the host openly.
 * A hostile host (crt-list syntax in it) is refused before anything is written.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { createServer } from 'node:http';
import { join } from 'node:path';
import { describe, it, type TestContext } from 'node:test';
import { request as httpsRequest } from 'node:https';
import { guardOwnership } from '../../src/adapter/ownership.ts';
import type { Certificate, HostClientValidation, L7VirtualService, LbState } from '../../src/model/types.ts';
import { plan } from '../../src/plan/diff.ts';
import {
  clientSignedBy,
  modelCertificate,
  testAuthority,
  type TestCertificate,
  caPem,
} from '../support/certs.ts';
import { assertNoListeners, haproxyMissing, opensslMissing } from '../support/haproxy.ts';
import { TRANSPORTS } from '../support/haproxy-transports.ts';
import * as kit from '../support/model.ts';
import { converge } from '../support/converge.ts';

const VIP = '127.0.62.1';
const PORT = 18443;
const MEMBER = { ip: '127.0.62.11', port: 18111 };
const POOL = 'e2e--shop-web-80.l7';
const VS = 'e2e--ingress-npl_https';
const SECURE = 'secure.example.com';
const OPEN = 'open.example.com';

/** A plain HTTP member that records the paths it served. */
async function member(t: TestContext): Promise<string[]> {
  const served: string[] = [];
  const server = createServer((req, res) => {
    served.push(req.url ?? '');
    res.end('web\n');
  });
  await new Promise<void>((r) => server.listen(MEMBER.port, MEMBER.ip, () => r()));
  t.after(() => {
    server.closeAllConnections();
    return new Promise<void>((r) => server.close(() => r()));
  });
  return served;
}

function state(certs: Certificate[], asked?: HostClientValidation[]): LbState {
  const route = (host: string) => ({
    host,
    path: '/',
    pathType: 'Prefix' as const,
    pool: POOL,
    source: `Ingress shop/${host}`,
  });
  const vs: L7VirtualService = {
    kind: 'l7',
    name: VS,
    vip: VIP,
    port: PORT,
    ingressClass: 'npl',
    routes: [route(SECURE), route(OPEN)],
    defaultPool: undefined,
    protocol: 'HTTPS',
    certificates: certs.map((c) => c.name),
    ...(asked ? { hostClientValidation: asked, listenerHosts: ['', OPEN, SECURE] } : {}),
  };
  const pool = kit.pool(POOL, [kit.member(MEMBER.ip, MEMBER.port, { pod: 'shop/web-0' })], {
    health: 'http',
    service: 'shop/web',
    servicePort: '80',
  });
  return { pools: [pool], virtualServices: [vs], certificates: certs };
}

/**
 * One request on a connection of its own: the TLS server name `sni` ('' for none), the Host
 * header `host`, this client certificate or none. Its status, or the error.
 */
async function get(
  sni: string,
  host: string,
  path: string,
  client?: TestCertificate,
): Promise<number | string> {
  // node:https, not undici: undici answers a 421 by trying again on another connection, and this
  // test is about what the load balancer answers.
  return new Promise((resolve) => {
    const req = httpsRequest(
      {
        host: VIP,
        port: PORT,
        path,
        headers: { host },
        agent: false,
        rejectUnauthorized: false,
        servername: sni,
        timeout: 5000,
        ...(client ? { cert: client.cert, key: client.key } : {}),
      },
      (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      },
    );
    req.on('timeout', () => req.destroy(new Error('timed out')));
    req.on('error', (err) => resolve(err.message));
    req.end();
  });
}

/** The frontend's crt-list on the device (the runtime's certificates directory, the Data Plane's storage). */
function crtListFile(dir: string): string {
  const found = readdirSync(dir, { recursive: true, encoding: 'utf8' }).filter((f) =>
    f.endsWith(`${VS}.crtlist`),
  );
  assert.equal(found.length, 1, `one crt-list of ${VS} under ${dir}: ${found.join(', ')}`);
  return join(dir, found[0]!);
}

/**
 * Two connections with `openssl s_client`: the first saves its TLS session, the second offers it
 * under the second name (the server decides whether to resume); each sends one GET /resume with
 * its Host. What each printed (the answer's status line among it).
 */
async function resumed(
  dir: string,
  version: string,
  first: { sni: string; host: string; args?: string[] },
  second: { sni: string; host: string },
): Promise<{ first: string; second: string }> {
  const sess = join(dir, 'session.pem');
  rmSync(sess, { force: true });
  // Not spawnSync: the member answering is in this process.
  const run = (o: { sni: string; host: string; args?: string[] }, session: string[]) =>
    new Promise<string>((resolve) => {
      const child = spawn(
        'openssl',
        [
          's_client',
          version,
          '-connect',
          `${VIP}:${PORT}`,
          '-servername',
          o.sni,
          '-ign_eof',
          ...session,
          ...(o.args ?? []),
        ],
        { stdio: ['pipe', 'pipe', 'ignore'], timeout: 10_000 },
      );
      let out = '';
      child.stdout.on('data', (d: Buffer) => (out += d.toString()));
      child.on('close', () => resolve(out));
      child.stdin.end(`GET /resume HTTP/1.1\r\nHost: ${o.host}\r\nConnection: close\r\n\r\n`);
    });
  const a = await run(first, ['-sess_out', sess]);
  const b = await run(second, ['-sess_in', sess]);
  return { first: a, second: b };
}

/** Until the request answers 200 (the new workers after a reload), bounded. */
async function served(sni: string, path: string, client?: TestCertificate): Promise<number | string> {
  let last: number | string = 'not tried';
  for (const until = Date.now() + 15_000; Date.now() < until;) {
    last = await get(sni, sni, path, client);
    if (last === 200) return last;
    await new Promise((r) => setTimeout(r, 200));
  }
  return last;
}

for (const tr of TRANSPORTS)
  describe(
    `client certificates for one host of an Ingress class on a real HAProxy (${tr.name})`,
    { skip: haproxyMissing() },
    () => {
      it('asked for that host alone; the 421 bypass tries; rotation, a hand edit and removal', async (t) => {
        assertNoListeners('127.0.62.', [PORT]);
        const [one, two] = await Promise.all([testAuthority('clients one'), testAuthority('clients two')]);
        const [alice, mallory, secureCert, openCert] = await Promise.all([
          clientSignedBy(one, 'alice'),
          clientSignedBy(two, 'mallory'),
          modelCertificate('e2e--shop.secure-tls', [SECURE]),
          modelCertificate('e2e--shop.open-tls', [OPEN]),
        ]);
        const served$ = await member(t);
        const rig = await tr.start(t, 4, { healthChecks: false });
        const adapter = guardOwnership(rig.adapter);
        assert.equal(rig.adapter.capabilities().http?.clientValidationByHost, true);
        const certs = [secureCert, openCert];
        const ask = (ca: string): HostClientValidation[] => [
          { host: SECURE, certificate: secureCert.name, ca: caPem(ca) },
        ];

        // The default certificate's own name asked for: it stays first, with a negative filter.
        await converge(adapter, state(certs, ask(one.cert)));
        assert.equal(await served(SECURE, '/alice', alice), 200);
        assert.equal(await get(OPEN, OPEN, '/open'), 200, 'the host beside asks nothing');
        const before = served$.length;
        assert.notEqual(await get(SECURE, SECURE, '/none'), 200, 'no certificate');
        assert.notEqual(await get(SECURE, SECURE, '/mallory', mallory), 200, 'a certificate of another CA');
        // The bypass tries: a handshake that asked nothing, then the asking host's Host.
        assert.equal(
          await get(OPEN, SECURE, '/smuggled'),
          421,
          'SNI of the open host, Host of the asking one',
        );
        assert.equal(await get('', SECURE, '/no-sni'), 421, 'no SNI, Host of the asking one');
        assert.equal(served$.length, before, 'nothing reached the member');

        // A TLS session of the open host resumed under the asking host's name (TLS 1.3 resumes it,
        // and a resumption asks no certificate): 421, never served. Another host's session under
        // its own name, and the asking host's own verified session, are served.
        if (!opensslMissing()) {
          const dir = mkdtempSync(join(tmpdir(), 'npl-resume-'));
          t.after(() => rmSync(dir, { recursive: true, force: true }));
          const clientFiles = (c: TestCertificate) => {
            writeFileSync(join(dir, 'client.crt'), c.cert);
            writeFileSync(join(dir, 'client.key'), c.key);
            return ['-cert', join(dir, 'client.crt'), '-key', join(dir, 'client.key')];
          };
          for (const version of ['-tls1_3', '-tls1_2']) {
            const open = await resumed(
              dir,
              version,
              { sni: OPEN, host: OPEN },
              { sni: SECURE, host: SECURE },
            );
            assert.match(open.first, /HTTP\/1\.1 200/, `${version}: the open host`);
            assert.match(
              open.second,
              /HTTP\/1\.1 421/,
              `${version}: its session under the asking host's name`,
            );
            const own = await resumed(
              dir,
              version,
              { sni: SECURE, host: SECURE, args: clientFiles(alice) },
              { sni: SECURE, host: SECURE },
            );
            assert.match(own.first, /HTTP\/1\.1 200/, `${version}: alice's handshake`);
            assert.match(own.second, /HTTP\/1\.1 200/, `${version}: alice's session resumed`);
          }
        }

        // Rotation: the other CA's client now served, the first's refused.
        await converge(adapter, state(certs, ask(two.cert)));
        assert.equal(await served(SECURE, '/rotated', mallory), 200);
        assert.notEqual(await get(SECURE, SECURE, '/rotated-alice', alice), 200);

        // The crt-list line edited by hand (`verify none`): seen, and written again.
        const want = state(certs, ask(one.cert));
        await converge(adapter, want);
        const list = crtListFile(rig.filesDir);
        const text = readFileSync(list, 'utf8');
        assert.match(text, /\[ca-file \S+ verify required\] secure\.example\.com\n/);
        writeFileSync(list, text.replace('verify required', 'verify none'));
        assert.deepEqual(
          plan(want, await adapter.observe()).changes.map((c) => `${c.op} ${c.kind} ${c.name}`),
          [`update virtualService ${VS}`],
          'the hand edit is seen',
        );
        await converge(adapter, want);
        assert.equal(await served(SECURE, '/repaired', alice), 200);
        assert.notEqual(await get(SECURE, SECURE, '/repaired-none'), 200);

        // A hostile host: crt-list syntax in it is refused before anything is written.
        const kept = readFileSync(list, 'utf8');
        const hostile = state(certs, [{ ...ask(one.cert)[0]!, host: `${SECURE} [verify none] *` }]);
        const refused = await adapter.apply(plan(hostile, await adapter.observe()).changes);
        assert.deepEqual(
          refused.map((r) => r.ok || r.error?.code),
          ['Invalid'],
        );
        assert.equal(readFileSync(list, 'utf8'), kept, 'the crt-list as it was');
        assert.notEqual(await get(SECURE, SECURE, '/still-asked'), 200, 'still asked');

        // Removed: the host served without a certificate again.
        await converge(adapter, state(certs));
        assert.equal(await served(SECURE, '/open-again'), 200);
        assert.deepEqual(rig.specProblems(), []);
      });
    },
  );
