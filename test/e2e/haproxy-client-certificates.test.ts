/**
 * Issue 48, item 2 (HAProxy, every transport): client certificates asked at an HTTPS virtual
 * service, on a real HAProxy with real handshakes. Required: a client with a certificate of the
 * CA is served, one of another CA or with none fails at the handshake and nothing reaches the
 * member; the insecure fallback serves all three; a CA rotated (to the other, then both) takes
 * effect; the CA file changed by hand on the device is seen and repaired by the next pass; the
 * validation removed serves clients without certificates again. Every transport: the runtime
 * socket, and the Data Plane API v2 and v3 (the simulator: the CA in its storage, the bind's
 * fields held to the spec).
 */
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { describe, it, type TestContext } from 'node:test';
import { Agent, request } from 'undici';
import { guardOwnership } from '../../src/adapter/ownership.ts';
import type { Certificate, ClientValidation, L7VirtualService, LbState } from '../../src/model/types.ts';
import { caTag } from '../../src/adapter/ca-bundles.ts';
import { plan } from '../../src/plan/diff.ts';
import {
  clientSignedBy,
  modelCertificate,
  testAuthority,
  type TestCertificate,
  caPem,
} from '../support/certs.ts';
import { assertNoListeners, caBundleFiles, haproxyMissing } from '../support/haproxy.ts';
import { TRANSPORTS } from '../support/haproxy-transports.ts';
import * as kit from '../support/model.ts';
import { converge } from '../support/converge.ts';

const VIP = '127.0.61.1';
const PORT = 18443;
const MEMBER = { ip: '127.0.61.11', port: 18111 };
const POOL = 'e2e--gw-web-8080.l7';
const VS = 'e2e--gw-gw.mtls-HTTPS-443';
const HOST = 'app.example.com';

/** A plain HTTP member that counts what it served. */
async function member(
  t: TestContext,
): Promise<{ served: string[]; subjects: Map<string, string | undefined> }> {
  const served: string[] = [];
  /** Path -> the x-client-subject header the member saw. */
  const subjects = new Map<string, string | undefined>();
  const server = createServer((req, res) => {
    served.push(req.url ?? '');
    subjects.set(req.url ?? '', req.headers['x-client-subject'] as string | undefined);
    res.end('web\n');
  });
  await new Promise<void>((r) => server.listen(MEMBER.port, MEMBER.ip, () => r()));
  t.after(() => {
    server.closeAllConnections();
    return new Promise<void>((r) => server.close(() => r()));
  });
  return { served, subjects };
}

function state(cert: Certificate, client?: ClientValidation): LbState {
  const vs: L7VirtualService = {
    kind: 'l7',
    name: VS,
    vip: VIP,
    port: PORT,
    ingressClass: 'npl-lb',
    routes: [{ host: '', path: '/', pathType: 'Prefix', pool: POOL, source: 'HTTPRoute gw/r', order: 0 }],
    defaultPool: undefined,
    protocol: 'HTTPS',
    certificates: [cert.name],
    ...(client ? { clientValidation: client } : {}),
  };
  const pool = kit.pool(POOL, [kit.member(MEMBER.ip, MEMBER.port, { pod: 'gw/web-0' })], {
    health: 'http',
    service: 'gw/web',
    servicePort: '8080',
  });
  return { pools: [pool], virtualServices: [vs], certificates: [cert] };
}

/** One request on a connection of its own, with this client certificate or none: its status, or the error. */
async function get(
  path: string,
  client?: TestCertificate,
  headers: Record<string, string> = {},
): Promise<number | string> {
  const agent = new Agent({
    connect: {
      rejectUnauthorized: false,
      servername: HOST,
      ...(client ? { cert: client.cert, key: client.key } : {}),
    },
  });
  try {
    const res = await request(`https://${VIP}:${PORT}${path}`, {
      dispatcher: agent,
      headers: { host: HOST, ...headers },
      headersTimeout: 5000,
      bodyTimeout: 5000,
    });
    await res.body.text();
    return res.statusCode;
  } catch (err) {
    return (err as Error).message;
  } finally {
    await agent.close().catch(() => undefined);
  }
}

/** Until `path` answers 200 for `client` (the new workers after a reload), bounded. */
async function served(path: string, client?: TestCertificate): Promise<number | string> {
  let last: number | string = 'not tried';
  for (const until = Date.now() + 15_000; Date.now() < until;) {
    last = await get(path, client);
    if (last === 200) return last;
    await new Promise((r) => setTimeout(r, 200));
  }
  return last;
}

for (const tr of TRANSPORTS)
  describe(
    `client certificates at an HTTPS bind on a real HAProxy (${tr.name})`,
    { skip: haproxyMissing() },
    () => {
      it('required, the insecure fallback, a CA rotated, a hand edit repaired, and removed', async (t) => {
        assertNoListeners('127.0.61.', [PORT]);
        const [one, two] = await Promise.all([testAuthority('clients one'), testAuthority('clients two')]);
        const [alice, mallory, cert] = await Promise.all([
          clientSignedBy(one, 'alice'),
          clientSignedBy(two, 'mallory'),
          modelCertificate('e2e--gw-cert', [HOST]),
        ]);
        const m = await member(t);
        const rig = await tr.start(t, 4, { healthChecks: false });
        const adapter = guardOwnership(rig.adapter);
        assert.equal(rig.adapter.capabilities().http?.clientValidation, true);

        // Required: the CA's client served; another CA's, and none, fail at the handshake.
        await converge(adapter, state(cert, { ca: caPem(one.cert), insecureFallback: false }));
        assert.equal(await served('/alice', alice), 200);
        const before = m.served.length;
        assert.notEqual(await get('/mallory', mallory), 200, 'a certificate of another CA');
        assert.notEqual(await get('/none'), 200, 'no certificate');
        assert.equal(m.served.length, before, 'nothing reached the member');

        // The insecure fallback: every client served (the backend decides).
        await converge(adapter, state(cert, { ca: caPem(one.cert), insecureFallback: true }));
        assert.equal(await served('/fallback-none'), 200);
        assert.equal(await get('/fallback-mallory', mallory), 200);
        assert.equal(await get('/fallback-alice', alice), 200);

        // Rotation: to the other CA (the first's client now refused), then both.
        await converge(adapter, state(cert, { ca: caPem(two.cert), insecureFallback: false }));
        assert.equal(await served('/rotated', mallory), 200);
        assert.notEqual(await get('/rotated-alice', alice), 200);
        await converge(
          adapter,
          state(cert, { ca: caPem(`${one.cert}${two.cert}`), insecureFallback: false }),
        );
        assert.equal(await served('/both-alice', alice), 200);
        assert.equal(await get('/both-mallory', mallory), 200);

        // The CA file changed by hand on the device: seen, and written again by the next pass.
        const want = state(cert, { ca: caPem(one.cert), insecureFallback: false });
        await converge(adapter, want);
        // (The runtime transport keeps the running file's bundles until the next write: the one of
        // both CAs may still be there.)
        const files = caBundleFiles(rig.filesDir);
        assert.ok(files.length <= 2, `the older rotations' CA files removed: ${files.join(', ')}`);
        const mine = files.find((f) => f.endsWith(`ca-${caTag(caPem(one.cert))}.pem`));
        assert.ok(mine, `the CA's file is there: ${files.join(', ')}`);
        writeFileSync(mine, two.cert);
        assert.deepEqual(
          plan(want, await adapter.observe()).changes.map((c) => `${c.op} ${c.kind} ${c.name}`),
          [`update virtualService ${VS}`],
          'the hand edit is seen',
        );
        await converge(adapter, want);
        assert.equal(await served('/repaired', alice), 200);
        assert.notEqual(await get('/repaired-mallory', mallory), 200);

        // The verified client's subject to the members, in the header named; never as a client sent it.
        const subject = 'x-client-subject';
        await converge(
          adapter,
          state(cert, { ca: caPem(one.cert), insecureFallback: true, subjectHeader: subject }),
        );
        assert.equal(await served('/subject-alice', alice), 200);
        assert.match(m.subjects.get('/subject-alice') ?? '', /CN=alice/, 'the verified subject');
        const forged = { [subject]: '/CN=admin' };
        assert.equal(await get('/subject-forged', undefined, forged), 200);
        assert.equal(m.subjects.get('/subject-forged'), undefined, 'a forged header is removed');
        assert.equal(await get('/subject-mallory', mallory, forged), 200);
        assert.equal(m.subjects.get('/subject-mallory'), undefined, 'an unverified certificate sends none');
        assert.equal(await get('/subject-alice-forged', alice, forged), 200);
        assert.match(m.subjects.get('/subject-alice-forged') ?? '', /CN=alice/);
        assert.doesNotMatch(m.subjects.get('/subject-alice-forged') ?? '', /admin/);

        // Removed: clients without a certificate served again, the CA file gone.
        await converge(adapter, state(cert));
        assert.equal(await served('/open'), 200);
        assert.ok(
          !caBundleFiles(rig.filesDir).some((f) =>
            f.endsWith(`ca-${caTag(caPem(`${one.cert}${two.cert}`))}.pem`),
          ),
          'a bundle neither the running nor the next configuration names is removed',
        );
        assert.deepEqual(rig.specProblems(), []);
      });
    },
  );
