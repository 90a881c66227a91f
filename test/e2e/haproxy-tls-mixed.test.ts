/**
 * TLS listeners of both modes on one port (the Gateway API's Mixed mode) on a real HAProxy, every
 * transport (the runtime socket; the Data Plane API v2 and v3 on the simulator), with real
 * handshakes, through its transitions: a Terminate-only port gains a Passthrough name (the
 * terminated name keeps HAProxy's certificate and reaches the plain backend, the passed-through
 * one gets the backend's own certificate end to end, any other name is closed), the loop's `ssl`
 * removed by hand on the device is seen and repaired by the next pass, and the port goes back to
 * Terminate alone with the loop gone. On the Data Plane API, a loop left without its port (the
 * port's frontend deleted by hand) is taken over when the port is written again in Mixed mode, and
 * deleted when the port comes back in Terminate mode alone or no port wants it.
 */
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { connect as tlsConnect, createServer as createTlsServer } from 'node:tls';
import { describe, it, type TestContext } from 'node:test';
import { guardOwnership } from '../../src/adapter/ownership.ts';
import type { Certificate, L4VirtualService, Pool } from '../../src/model/types.ts';
import { plan } from '../../src/plan/diff.ts';
import { modelCertificate, testCertificate } from '../support/certs.ts';
import { assertNoListeners, haproxyMissing } from '../support/haproxy.ts';
import { TRANSPORTS, type TransportRig } from '../support/haproxy-transports.ts';

const NAME = 'e2e--gw-gw.gw-TLS-8883';
/** The loop's sections (tls-mixed.ts loopName). */
const LOOP = `${NAME}_tls`;
const VIP = '127.0.44.1';
const PORT = 18883;
const PLAIN = { ip: '127.0.44.11', port: 18131 };
const SECURE = { ip: '127.0.44.12', port: 18132 };

const pool = (name: string, at: { ip: string; port: number }): Pool => ({
  name,
  protocol: 'TCP',
  health: 'tcp',
  service: `gw/${name}`,
  servicePort: String(at.port),
  members: [{ address: at.ip, port: at.port, node: 'n1', pod: `gw/${name}-0`, enabled: true }],
});
const plainPool = pool('e2e--gw-plain-3000', PLAIN);
const securePool = pool('e2e--gw-secure-8443', SECURE);

/** The plain backend says `plain` and the TLS one `secure`; each then closes. */
async function backends(t: TestContext): Promise<void> {
  const plain = createServer((s) => s.end('plain\n'));
  await new Promise<void>((r) => plain.listen(PLAIN.port, PLAIN.ip, () => r()));
  t.after(() => new Promise<void>((r) => plain.close(() => r())));
  const c = await testCertificate({ dns: ['abc.example.com'] });
  const secure = createTlsServer({ cert: c.cert, key: c.key }, (s) => s.end('secure\n'));
  await new Promise<void>((r) => secure.listen(SECURE.port, SECURE.ip, () => r()));
  t.after(() => new Promise<void>((r) => secure.close(() => r())));
}

type Fate = { body: string; san: string; fingerprint: string } | 'closed';

/** A ClientHello naming `sni`: the certificate served (its names and fingerprint) and what came back. */
const hello = (sni: string) =>
  new Promise<Fate>((resolve) => {
    const s = tlsConnect({ host: VIP, port: PORT, servername: sni, rejectUnauthorized: false });
    let body = '';
    let san = '';
    let fingerprint = '';
    s.on('secureConnect', () => {
      const peer = s.getPeerCertificate();
      san = String(peer.subjectaltname ?? '');
      fingerprint = String(peer.fingerprint256 ?? '');
    });
    s.on('data', (d: Buffer) => (body += d.toString()));
    s.on('end', () => resolve(san === '' ? 'closed' : { body: body.trim(), san, fingerprint }));
    s.on('error', () => resolve('closed'));
    s.setTimeout(3000, () => {
      s.destroy();
      resolve('closed');
    });
  });

function mixedPort(cert: Certificate, passthrough: boolean): L4VirtualService {
  return {
    kind: 'l4',
    name: NAME,
    vip: VIP,
    port: PORT,
    protocol: 'TCP',
    pool: '',
    source: 'Gateway gw/gw',
    certificates: [cert.name],
    sni: [
      { host: 'tls.example.com', pool: plainPool.name, source: 'TLSRoute gw/terminated' },
      ...(passthrough
        ? [
            {
              host: 'abc.example.com',
              pool: securePool.name,
              source: 'TLSRoute gw/through',
              passthrough: true as const,
            },
          ]
        : []),
    ],
  };
}

/**
 * The loop's `ssl` dropped by hand: from the runtime transport's file (and a reload), or from the
 * loop's bind through the Data Plane API.
 */
async function dropLoopSsl(rig: TransportRig): Promise<void> {
  if (rig.client) {
    const c = rig.client;
    const tx = await c.startTransaction(await c.configVersion());
    const [bind] = await c.binds(LOOP, tx);
    assert.ok(bind?.ssl, "the loop's bind terminates");
    const { ssl: _ssl, crt_list: _list, ...plain } = bind;
    await c.putBind(tx, LOOP, plain, true);
    await c.commit(tx);
    await rig.idle();
    return;
  }
  const file = rig.configFile!;
  const text = readFileSync(file, 'utf8');
  const edited = text.replace(/(bind abns@\S+ accept-proxy) ssl crt-list \S+/, '$1');
  assert.notEqual(edited, text, 'the loop is in the file');
  writeFileSync(file, edited);
  await rig.reload();
}

/** Whether the device holds loop sections (the file's abstract socket, or the API's `_tls` sections). */
async function hasLoop(rig: TransportRig): Promise<boolean> {
  if (!rig.client) return /abns@|part-of=/.test(readFileSync(rig.configFile!, 'utf8'));
  const names = [...(await rig.client.frontends()), ...(await rig.client.backends())].map((x) => x.name);
  return names.includes(LOOP);
}

for (const tr of TRANSPORTS)
  describe(`TLS Mixed mode on a real HAProxy (${tr.name})`, { skip: haproxyMissing() }, () => {
    it('a Terminate port gains a Passthrough name and loses it; a hand-edited loop is repaired', async (t) => {
      assertNoListeners('127.0.44.', [PORT]);
      await backends(t);
      const cert = await modelCertificate('e2e--gw.tls-terminate', ['tls.example.com']);
      const rig = await tr.start(t);
      const adapter = guardOwnership(rig.adapter);
      assert.equal(adapter.capabilities().tlsMixed, true);
      const sync = async (vs: L4VirtualService) => {
        const state = { pools: [plainPool, securePool], virtualServices: [vs], certificates: [cert] };
        const r = await adapter.apply(plan(state, await adapter.observe()).changes);
        assert.deepEqual(
          r.filter((x) => !x.ok).map((x) => x.error?.message),
          [],
        );
        await rig.idle();
        assert.deepEqual(plan(state, await adapter.observe()).changes, [], 'observed back exactly');
        return state;
      };
      const terminated = async () => {
        const got = await hello('tls.example.com');
        assert.notEqual(got, 'closed', 'the terminated name is served');
        if (got === 'closed') return;
        assert.equal(got.fingerprint, cert.fingerprint, "HAProxy's certificate for the terminated name");
        assert.equal(got.body, 'plain', 'the plain backend, in clear text behind HAProxy');
      };

      // Terminate alone: the other name completes a handshake with the default certificate, and
      // nothing answers it.
      const unanswered = async (sni: string) => {
        const got = await hello(sni);
        assert.ok(got === 'closed' || got.body === '', `${sni}: no backend answers`);
      };
      await sync(mixedPort(cert, false));
      await terminated();
      await unanswered('abc.example.com');
      assert.equal(await hasLoop(rig), false, 'Terminate alone needs no loop');

      // Mixed: both names on the one port.
      const mixed = await sync(mixedPort(cert, true));
      await terminated();
      const through = await hello('abc.example.com');
      assert.notEqual(through, 'closed', 'the passthrough name is served');
      if (through !== 'closed') {
        assert.equal(through.body, 'secure');
        assert.match(through.san, /abc\.example\.com/, "the backend's own certificate, end to end");
        assert.notEqual(through.fingerprint, cert.fingerprint);
      }
      assert.equal(await hello('other.example.com'), 'closed', 'a name no route takes is closed');
      const observed = await adapter.observe();
      assert.deepEqual(
        observed.owned.pools.map((p) => p.name).sort(),
        [plainPool.name, securePool.name].sort(),
        "the loop is no pool of the controller's",
      );
      assert.deepEqual(
        observed.owned.virtualServices.map((v) => v.name),
        [NAME],
      );

      // Someone drops the loop's `ssl` by hand: the virtual service is seen without termination,
      // and the next pass writes it again.
      await dropLoopSsl(rig);
      const drift = plan(mixed, await adapter.observe()).changes;
      assert.deepEqual(
        drift.map((c) => `${c.op} ${c.kind} ${c.name}`),
        [`update virtualService ${NAME}`],
      );
      await sync(mixedPort(cert, true));
      await terminated();

      // Back to Terminate alone: the loop is gone from the device.
      await sync(mixedPort(cert, false));
      assert.equal(await hasLoop(rig), false, 'the loop is gone');
      await terminated();
      await unanswered('abc.example.com');
      assert.deepEqual(rig.specProblems(), [], 'every Data Plane exchange as its spec says');
    });
  });

for (const tr of TRANSPORTS.filter((x) => x.name.startsWith('Data Plane')))
  describe(`TLS Mixed mode's loop left alone on the ${tr.name}`, { skip: haproxyMissing() }, () => {
    it('is taken over when its port is written again, and deleted when no Mixed port wants it', async (t) => {
      assertNoListeners('127.0.44.', [PORT]);
      await backends(t);
      const cert = await modelCertificate('e2e--gw.tls-terminate', ['tls.example.com']);
      const rig = await tr.start(t);
      const c = rig.client!;
      const adapter = guardOwnership(rig.adapter);
      const state = (vs: L4VirtualService[]) => ({
        pools: [plainPool, securePool],
        virtualServices: vs,
        certificates: [cert],
      });
      const converge = async (want: ReturnType<typeof state>) => {
        for (let i = 0; i < 3; i++) {
          const changes = plan(want, await adapter.observe()).changes;
          if (changes.length === 0) return;
          const r = await adapter.apply(changes);
          assert.deepEqual(
            r.filter((x) => !x.ok).map((x) => x.error?.message),
            [],
          );
          await rig.idle();
        }
        assert.deepEqual(plan(want, await adapter.observe()).changes, [], 'converged');
      };
      await converge(state([mixedPort(cert, true)]));

      // The port's own frontend deleted by hand: its loop is left, read as sections of their own.
      const dropPort = async () => {
        const tx = await c.startTransaction(await c.configVersion());
        await c.deleteFrontend(tx, NAME);
        await c.commit(tx);
        await rig.idle();
      };
      await dropPort();
      const left = plan(state([mixedPort(cert, true)]), await adapter.observe()).changes;
      assert.deepEqual(
        left.map((x) => `${x.op} ${x.kind} ${x.name}`).sort(),
        [`create virtualService ${NAME}`, `delete pool ${LOOP}`, `delete virtualService ${LOOP}`].sort(),
      );
      // Written again, the port takes its loop over (no conflict with the sections there).
      await converge(state([mixedPort(cert, true)]));
      await servesTerminated(cert);
      assert.equal(await hasLoop(rig), true);

      // Left again, the port now wanted in Terminate mode alone: the stray loop goes, the port is
      // written without one.
      await dropPort();
      await converge(state([mixedPort(cert, false)]));
      assert.equal(await hasLoop(rig), false, 'the stray loop is deleted');
      await servesTerminated(cert);

      // Mixed again, then left with no port wanting it at all: deleted.
      await converge(state([mixedPort(cert, true)]));
      await dropPort();
      await converge(state([]));
      assert.equal(await hasLoop(rig), false, 'the stray loop is deleted');
      assert.deepEqual(rig.specProblems(), []);
    });
  });

/** The terminated name served with HAProxy's certificate, the plain backend behind it. */
async function servesTerminated(cert: Certificate): Promise<void> {
  const got = await hello('tls.example.com');
  assert.notEqual(got, 'closed', 'the terminated name is served');
  if (got !== 'closed') assert.equal(got.fingerprint, cert.fingerprint);
}
