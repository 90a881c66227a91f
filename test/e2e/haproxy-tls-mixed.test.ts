/**
 * TLS listeners of both modes on one port (the Gateway API's Mixed mode) on a real HAProxy,
 * runtime transport, with real handshakes, through its transitions: a Terminate-only port gains a
 * Passthrough name (the terminated name keeps HAProxy's certificate and reaches the plain backend,
 * the passed-through one gets the backend's own certificate end to end, any other name is closed),
 * the loop's `ssl` removed by hand on the device is seen and repaired by the next pass, and the port
 * goes back to Terminate alone with the loop gone. The Data Plane transport, which has no loop,
 * refuses such a virtual service by its capability.
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
import { TRANSPORTS } from '../support/haproxy-transports.ts';

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
    name: 'e2e--gw-gw.gw-TLS-8883',
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

const [runtime, ...dataplanes] = TRANSPORTS;

describe('TLS Mixed mode on a real HAProxy (runtime transport)', { skip: haproxyMissing() }, () => {
  it('a Terminate port gains a Passthrough name and loses it; a hand-edited loop is repaired', async (t) => {
    assertNoListeners('127.0.44.', [PORT]);
    await backends(t);
    const cert = await modelCertificate('e2e--gw.tls-terminate', ['tls.example.com']);
    const rig = await runtime!.start(t);
    const adapter = guardOwnership(rig.adapter);
    const sync = async (vs: L4VirtualService) => {
      const state = { pools: [plainPool, securePool], virtualServices: [vs], certificates: [cert] };
      const r = await adapter.apply(plan(state, await adapter.observe()).changes);
      assert.deepEqual(
        r.filter((x) => !x.ok).map((x) => x.error?.message),
        [],
      );
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

    // Someone drops the loop's `ssl` by hand: the virtual service is seen without termination, and
    // the next pass writes it again.
    const file = rig.configFile!;
    const text = readFileSync(file, 'utf8');
    const edited = text.replace(/(bind abns@\S+ accept-proxy) ssl crt-list \S+/, '$1');
    assert.notEqual(edited, text, 'the loop is in the file');
    writeFileSync(file, edited);
    await rig.reload();
    const drift = plan(mixed, await adapter.observe()).changes;
    assert.deepEqual(
      drift.map((c) => `${c.op} ${c.kind} ${c.name}`),
      ['update virtualService e2e--gw-gw.gw-TLS-8883'],
    );
    await sync(mixedPort(cert, true));
    await terminated();

    // Back to Terminate alone: the loop is gone from the file.
    await sync(mixedPort(cert, false));
    assert.doesNotMatch(readFileSync(file, 'utf8'), /abns@|part-of=/);
    await terminated();
    await unanswered('abc.example.com');
  });
});

for (const tr of dataplanes)
  describe(`TLS Mixed mode on the ${tr.name}`, { skip: haproxyMissing() }, () => {
    it('is refused by its capability, and the other changes go on', async (t) => {
      const cert = await modelCertificate('e2e--gw.tls-terminate', ['tls.example.com']);
      const rig = await tr.start(t);
      assert.equal(rig.adapter.capabilities().tlsMixed, false);
      const state = {
        pools: [plainPool, securePool],
        virtualServices: [mixedPort(cert, true)],
        certificates: [cert],
      };
      const r = await rig.adapter.apply(plan(state, await rig.adapter.observe()).changes);
      const refused = r.filter((x) => !x.ok);
      assert.deepEqual(
        refused.map((x) => x.change.name),
        ['e2e--gw-gw.gw-TLS-8883'],
      );
      assert.match(refused[0]!.error?.message ?? '', /Capabilities\.tlsMixed/);
      assert.ok(r.some((x) => x.ok && x.change.kind === 'pool'));
    });
  });
