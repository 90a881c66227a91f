/**
 * Issue 48, item 1 (HAProxy, every transport): a pool spoken to over TLS (a BackendTLSPolicy),
 * on a real HAProxy with real TLS members that report the SNI they were asked for. The policy's
 * hostname is sent and verified, never the address connected to; a CA that does not match, or a
 * name the certificate does not carry, fails at the load balancer (503, the member down), never
 * unverified and never in clear text; a CA rotated (the wrong one, then both) takes effect (by a
 * reload: HAProxy 2.6 does not update a server's CA at runtime); the CA
 * file changed by hand on the device is repaired by the next pass; a member added at runtime to a
 * pool that had none (its CA loaded by no server yet) is served; health checks speak the same
 * verified TLS. Every transport: the runtime socket, and the Data Plane API v2 and v3 (the
 * simulator, its CA bundles in its storage, its servers' ssl fields held to the spec).
 */
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import type { TLSSocket } from 'node:tls';
import { describe, it, type TestContext } from 'node:test';
import { request } from 'undici';
import { guardOwnership } from '../../src/adapter/ownership.ts';
import type { BackendTls, Certificate, L7VirtualService, LbState, Pool } from '../../src/model/types.ts';
import { plan } from '../../src/plan/diff.ts';
import { modelCertificate, signedBy, testAuthority, type TestCertificate, caPem } from '../support/certs.ts';
import { assertNoListeners, caBundleFiles, haproxyMissing } from '../support/haproxy.ts';
import { TRANSPORTS } from '../support/haproxy-transports.ts';
import * as kit from '../support/model.ts';
import { eventually } from '../support/sandbox.ts';
import { converge } from '../support/converge.ts';

const VIP = '127.0.58.1';
const PORT = 18095;
const MEMBER = { ip: '127.0.58.11', port: 18111 };
const POOL = 'e2e--gw-tls-443.tls';
const NAME = 'backend.example.com';

/** A TLS member: answers with the SNI it was asked for; counts what it served. */
async function tlsMember(t: TestContext, cert: TestCertificate): Promise<{ served: string[] }> {
  const served: string[] = [];
  const server: Server = createServer(cert, (req, res) => {
    const sni = (req.socket as { servername?: string }).servername ?? '';
    served.push(`${sni} ${req.url}`);
    res.setHeader('content-type', 'application/json');
    res.end(JSON.stringify({ sni, path: req.url }));
  });
  await new Promise<void>((r) => server.listen(MEMBER.port, MEMBER.ip, () => r()));
  t.after(() => {
    server.closeAllConnections();
    return new Promise<void>((r) => server.close(() => r()));
  });
  return { served };
}

function state(
  tls: BackendTls,
  members = [kit.member(MEMBER.ip, MEMBER.port, { pod: 'gw/tls-0' })],
): LbState {
  const pool: Pool = {
    ...kit.pool(POOL, members, { health: 'http', service: 'gw/tls', servicePort: '443' }),
    backendTls: tls,
  };
  const vs: L7VirtualService = {
    kind: 'l7',
    name: 'e2e--gw-gw.gw-HTTP-80',
    vip: VIP,
    port: PORT,
    ingressClass: 'npl-lb',
    routes: [{ host: '', path: '/', pathType: 'Prefix', pool: POOL, source: 'HTTPRoute gw/r', order: 0 }],
    defaultPool: undefined,
  };
  return { pools: [pool], virtualServices: [vs] };
}

async function get(path: string): Promise<{ status: number; body: string }> {
  const res = await request(`http://${VIP}:${PORT}${path}`, { headers: { host: 'app.example.com' } });
  return { status: res.statusCode, body: await res.body.text() };
}

/** The answer once the member is back up (its health carries over a reload: it rises again by checks). */
async function served(path: string): Promise<{ status: number; body: string }> {
  let last = { status: 0, body: '' };
  await eventually(
    async () => {
      last = await get(path);
      return last.status === 200;
    },
    15_000,
    `200 on ${path}`,
  ).catch(() => undefined);
  return last;
}

for (const tr of TRANSPORTS)
  describe(`TLS to members on a real HAProxy (${tr.name})`, { skip: haproxyMissing() }, () => {
    it('SNI and name verified against the CA; a wrong CA or name fails at the load balancer; rotation, a hand edit and a member added at runtime', async (t) => {
      assertNoListeners('127.0.58.', [PORT]);
      const [ca, wrong] = await Promise.all([testAuthority('ca one'), testAuthority('ca two')]);
      const member = await tlsMember(t, await signedBy(ca, [NAME]));
      const rig = await tr.start(t, 4, { healthChecks: true });
      const adapter = guardOwnership(rig.adapter);
      const health = () => rig.adapter.health!();
      const good: BackendTls = { serverName: NAME, verifyNames: [NAME], ca: caPem(ca.cert) };
      assert.deepEqual(rig.adapter.capabilities().http?.backendTls, {
        systemCa: true,
        maxVerifyNames: 1,
        namesApartFromSni: false,
        clientCertificates: true,
      });

      await converge(adapter, state(good));
      const first = await served('/one');
      assert.equal(first.status, 200, first.body);
      assert.deepEqual(JSON.parse(first.body), { sni: NAME, path: '/one' }, 'the policy’s hostname as SNI');
      await eventually(
        async () => (await health()).some((h) => h.pool === POOL && h.health === 'up'),
        10_000,
        'the member checked up over the verified TLS',
      );

      // A CA that did not sign the member's certificate: refused at the load balancer (HAProxy
      // 2.6 updates a server's CA only by a reload: the new workers verify against the new one).
      const reloadsBefore = rig.reloads();
      await converge(adapter, state({ ...good, ca: caPem(wrong.cert) }));
      await rig.idle();
      assert.ok(rig.reloads() > reloadsBefore, 'a CA rotated by a reload');
      await eventually(
        async () => (await health()).some((h) => h.pool === POOL && h.health === 'down'),
        15_000,
        'the member checked down: its certificate does not verify',
      );
      const before = member.served.length;
      assert.equal((await get('/wrong-ca')).status, 503);
      assert.equal(member.served.length, before, 'nothing reached the member');

      // Rotation: both CAs while rotating, then the new one's certificate passes.
      await converge(adapter, state({ ...good, ca: caPem(`${wrong.cert}${ca.cert}`) }));
      assert.equal((await served('/both')).status, 200);

      // A hostname the certificate does not carry (sent as SNI and verified).
      await converge(
        adapter,
        state({ serverName: 'other.example.com', verifyNames: ['other.example.com'], ca: good.ca }),
      );
      await rig.idle();
      assert.equal((await get('/other-name')).status, 503);

      // The CA file changed by hand on the device: read as it is, and the next pass writes it again.
      await converge(adapter, state(good));
      const files = caBundleFiles(rig.filesDir);
      assert.equal(files.length, 1, `one CA file, the rotated ones removed: ${files.join(', ')}`);
      writeFileSync(files[0]!, wrong.cert);
      const drift = plan(state(good), await adapter.observe()).changes;
      assert.deepEqual(
        drift.map((c) => `${c.op} ${c.kind} ${c.name}`),
        [`update pool ${POOL}`],
        'the hand edit is seen',
      );
      await converge(adapter, state(good));
      assert.equal((await served('/repaired')).status, 200);

      // A pool with no member, then one added: served, its CA loaded where HAProxy needs it.
      await converge(adapter, state(good, []));
      await rig.idle();
      assert.equal((await get('/none')).status, 503);
      const reloads = rig.reloads();
      await converge(adapter, state(good));
      if (tr.name === 'runtime transport')
        assert.equal(rig.reloads(), reloads, 'the member added at runtime, without a reload');
      const back = await served('/added');
      assert.equal(back.status, 200, back.body);
      assert.deepEqual(JSON.parse(back.body), { sni: NAME, path: '/added' });
      assert.deepEqual(rig.specProblems(), []);
    });

    it('a client certificate presented to members that require one: served, rotated in place, removed (refused at the member), a hand edit repaired', async (t) => {
      assertNoListeners('127.0.58.', [PORT]);
      const ca = await testAuthority('member ca');
      const [first, second, stranger] = await Promise.all([
        modelCertificate('e2e--gw.client', ['gateway.example.com']),
        modelCertificate('e2e--gw.client', ['gateway-rotated.example.com']),
        modelCertificate('e2e--gw.stranger', ['stranger.example.com']),
      ]);
      // The member trusts the two client certificates it is given (each its own anchor), no other.
      const seen: string[] = [];
      const server: Server = createServer(
        {
          ...(await signedBy(ca, [NAME])),
          requestCert: true,
          rejectUnauthorized: true,
          ca: [first.certPem, second.certPem],
        },
        (req, res) => {
          const peer = (req.socket as TLSSocket).getPeerCertificate();
          const cn = String(peer.subject?.CN ?? '');
          seen.push(cn);
          res.end(JSON.stringify({ client: cn }));
        },
      );
      await new Promise<void>((r) => server.listen(MEMBER.port, MEMBER.ip, () => r()));
      t.after(() => {
        server.closeAllConnections();
        return new Promise<void>((r) => server.close(() => r()));
      });
      const rig = await tr.start(t, 4, { healthChecks: false });
      const adapter = guardOwnership(rig.adapter);
      const tls = (clientCertificate?: string): BackendTls => ({
        serverName: NAME,
        verifyNames: [NAME],
        ca: caPem(ca.cert),
        ...(clientCertificate ? { clientCertificate } : {}),
      });
      const withCert = (c: Certificate | undefined, name = c?.name): LbState => ({
        ...state(tls(name)),
        certificates: c ? [c] : [],
      });

      await converge(adapter, withCert(first));
      const one = await served('/first');
      assert.equal(one.status, 200, one.body);
      assert.deepEqual(JSON.parse(one.body), { client: 'gateway.example.com' });

      // The Secret rotated: the same certificate name, another certificate; the member sees it on
      // the next connection (one HAProxy keeps open to the member goes on as it was made).
      await converge(adapter, withCert(second));
      server.closeAllConnections();
      await eventually(
        async () => (await get('/rotated')).body.includes('gateway-rotated.example.com'),
        15_000,
        'the rotated certificate presented',
      );

      // A certificate the member does not trust, then none: refused at the member, never served.
      await converge(adapter, withCert(stranger));
      await rig.idle();
      server.closeAllConnections();
      await eventually(
        async () => (await get('/stranger')).status !== 200,
        15_000,
        'an untrusted certificate refused',
      );
      const before = seen.length;
      await converge(adapter, withCert(undefined, undefined));
      await rig.idle();
      server.closeAllConnections();
      await eventually(async () => (await get('/none')).status !== 200, 15_000, 'no certificate: refused');
      assert.equal(seen.length, before, 'nothing reached the member without a certificate it trusts');

      // Back, then the server words changed by hand: seen, and the next pass writes them again.
      await converge(adapter, withCert(second));
      assert.equal((await served('/back')).status, 200);
      if (tr.name === 'runtime transport') {
        const cfg = readFileSync(rig.configFile!, 'utf8');
        writeFileSync(rig.configFile!, cfg.replace(/ crt \S+/g, ''));
        const drift = plan(withCert(second), await adapter.observe()).changes;
        assert.deepEqual(
          drift.map((c) => `${c.op} ${c.kind} ${c.name}`),
          [`update pool ${POOL}`],
          'the hand edit is seen',
        );
        await converge(adapter, withCert(second));
        assert.match(readFileSync(rig.configFile!, 'utf8'), / crt \S+e2e--gw\.client\.pem/);
      }
      assert.deepEqual(rig.specProblems(), []);
    });
  });
