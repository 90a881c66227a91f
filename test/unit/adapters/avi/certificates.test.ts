/**
 * Avi certificates and HTTPS listeners against the simulator: certificates checked before they are
 * sent (no CN nor SAN, a key that does not match, expired: refused alone, nothing written) and by
 * the simulated controller itself; an HTTPS virtual service is an SNI parent with the default
 * certificate and a child per further certificate named for its hosts; rotation updates the
 * certificate in place and the child follows its new names; a certificate in use cannot go; the
 * key is never read back; a restart compares without the key and writes nothing.
 */
import assert from 'node:assert/strict';
import { X509Certificate } from 'node:crypto';
import { describe, it } from 'node:test';
import type { AviAdapter } from '../../../../adapters/avi/adapter.ts';
import { AviSimulator } from '../../../../sim/avi/simulator.ts';
import type { Change } from '../../../../src/adapter/changes.ts';
import type { Certificate, L7VirtualService, LbState, Pool } from '../../../../src/model/types.ts';
import { plan } from '../../../../src/plan/diff.ts';
import { modelCertificate, testCertificate } from '../../../support/certs.ts';
import { aviAdapter } from '../../../support/lb-fixtures.ts';

const pool: Pool = {
  name: 'c1--default-web-80.l7',
  protocol: 'TCP',
  health: 'tcp',
  service: 'default/web',
  servicePort: '80',
  members: [{ address: '192.0.2.1', port: 61000, node: 'n1', pod: 'default/w1', enabled: true }],
};
const https = (certificates: string[]): L7VirtualService => ({
  kind: 'l7',
  name: 'c1--ingress-npl-https',
  vip: '192.0.2.30',
  port: 443,
  ingressClass: 'npl',
  protocol: 'HTTPS',
  certificates,
  defaultPool: undefined,
  routes: [{ host: 'a.example.com', path: '/', pathType: 'Prefix', pool: pool.name, source: 'default/ing' }],
});

async function setup(t: { after: (fn: () => Promise<void>) => void }) {
  const sim = new AviSimulator();
  const url = await sim.start();
  const make = () => aviAdapter(url);
  const adapter = make();
  t.after(async () => {
    await adapter.close();
    await sim.close();
  });
  return { sim, adapter, make, url };
}

async function sync(a: AviAdapter, s: LbState) {
  const changes = plan(s, await a.observe()).changes;
  return { changes, results: await a.apply(changes) };
}

const fromPems = (name: string, c: { cert: string; key: string }): Certificate => {
  const leaf = new X509Certificate(c.cert);
  return {
    name,
    source: `default/${name}`,
    certPem: leaf.toString(),
    keyPem: c.key,
    subject: leaf.subject,
    sniNames: [],
    fingerprint: leaf.fingerprint256,
    notAfter: new Date(leaf.validTo).toISOString(),
  };
};

describe('Avi certificates and HTTPS', () => {
  it('an SNI parent with the default certificate and a child per further one; rotation in place; a restart writes nothing', async (t) => {
    const { sim, adapter, make } = await setup(t);
    const a = await modelCertificate('c1--default-a-tls', ['a.example.com']);
    const b = await modelCertificate('c1--default-b-tls', ['b.example.com', '*.b.example.com']);
    const s: LbState = { pools: [pool], virtualServices: [https([a.name, b.name])], certificates: [a, b] };
    const { results } = await sync(adapter, s);
    assert.deepEqual(
      results.filter((r) => !r.ok),
      [],
    );
    const parent = sim.objects('virtualservice').get('c1--ingress-npl-https')!;
    assert.equal(parent.type, 'VS_TYPE_VH_PARENT');
    assert.deepEqual(parent.services, [{ port: 443, enable_ssl: true }]);
    const child = [...sim.objects('virtualservice').values()].find((v) => v.type === 'VS_TYPE_VH_CHILD')!;
    assert.deepEqual(child.vh_domain_name, ['b.example.com', '*.b.example.com']);
    assert.match(String(child.vh_parent_vs_ref), new RegExp(`/api/virtualservice/${String(parent.uuid)}`));
    // The key is never read back; observe compares without it.
    const stored = sim.objects('sslkeyandcertificate').get(a.name)!;
    assert.equal(typeof stored.key, 'string', 'the controller holds it');
    const read = await adapter.session.call('GET', `/api/sslkeyandcertificate?name=${a.name}`);
    const got = (read.body as { results: Record<string, unknown>[] }).results[0]!;
    assert.equal(got.key, undefined, 'and never gives it back');
    assert.deepEqual((got.certificate as { subject: unknown }).subject, { common_name: 'a.example.com' });
    const seen = await adapter.observe();
    assert.deepEqual(
      seen.owned.certificates?.map((c) => [c.name, c.keyPem.startsWith('sha256:')]),
      [
        [a.name, true],
        [b.name, true],
      ],
    );
    assert.deepEqual(plan(s, seen).changes, [], 'observed exactly as applied');
    // A restart against the simulator (defaults filled in, refs as full urls) writes nothing.
    const writes = sim.stats.writes;
    const again = make();
    t.after(() => again.close());
    assert.deepEqual((await sync(again, s)).changes, []);
    assert.equal(sim.stats.writes, writes, 'no write after a restart');
    // Rotation: b gets a new certificate for other names; one certificate update, and the child
    // follows. Its first re-render is refused (503): the child reads back stale at the next
    // observe, and that pass writes the service again.
    const childName = [...sim.objects('virtualservice').values()].find((v) => v.type === 'VS_TYPE_VH_CHILD')!
      .name as string;
    sim.faults.failNames.add(childName);
    const b2 = await modelCertificate(b.name, ['c.example.com']);
    const s2: LbState = { ...s, certificates: [a, b2] };
    const r2 = await sync(again, s2);
    assert.deepEqual(
      r2.changes.map((c) => `${c.op} ${c.kind}`),
      ['update certificate'],
    );
    assert.deepEqual(
      r2.results.filter((r) => !r.ok),
      [],
    );
    const childNow = () =>
      [...sim.objects('virtualservice').values()].find((v) => v.type === 'VS_TYPE_VH_CHILD')!;
    assert.deepEqual(
      childNow().vh_domain_name,
      ['b.example.com', '*.b.example.com'],
      'the re-render was refused',
    );
    assert.equal(
      new X509Certificate(
        String(
          (sim.objects('sslkeyandcertificate').get(b.name)!.certificate as { certificate: string })
            .certificate,
        ),
      ).fingerprint256,
      b2.fingerprint,
    );
    sim.faults.failNames.clear();
    const healed = await sync(make(), s2);
    assert.deepEqual(
      healed.changes.map((c) => `${c.op} ${c.kind}`),
      ['update virtualService'],
    );
    assert.deepEqual(
      healed.results.filter((r) => !r.ok),
      [],
    );
    assert.deepEqual(childNow().vh_domain_name, ['c.example.com']);
    assert.deepEqual(plan(s2, await make().observe()).changes, [], 'and then nothing to do');
    // One certificate fewer: its child goes, then the certificate (in use until then).
    const s3: LbState = { ...s2, virtualServices: [https([a.name])], certificates: [a] };
    const r3 = await sync(again, s3);
    assert.deepEqual(
      r3.results.filter((r) => !r.ok),
      [],
    );
    assert.equal(
      [...sim.objects('virtualservice').values()].filter((v) => v.type === 'VS_TYPE_VH_CHILD').length,
      0,
    );
    assert.equal(sim.objects('sslkeyandcertificate').has(b.name), false);
  });

  it('refuses alone, before sending, a certificate without CN or SAN, with a key that does not match, or expired', async (t) => {
    const { sim, adapter } = await setup(t);
    const other = await testCertificate({ dns: ['x.example.com'] });
    const good = await modelCertificate('c1--default-good', ['a.example.com']);
    const noName = fromPems('c1--default-noname', await testCertificate({ dns: [], cn: null }));
    const wrongKey = { ...fromPems('c1--default-wrongkey', await testCertificate()), keyPem: other.key };
    const expired = fromPems(
      'c1--default-expired',
      await testCertificate({ notAfter: new Date(Date.now() - 86_400_000) }),
    );
    const changes: Change[] = [good, noName, wrongKey, expired].map((c) => ({
      op: 'create',
      kind: 'certificate',
      name: c.name,
      desired: c,
    }));
    const writes = sim.stats.writes;
    const results = await adapter.apply(changes);
    assert.deepEqual(
      results.map((r) => [
        r.change.name,
        r.ok,
        r.error?.terminal ?? null,
        /CN|common name|match|expired/i.test(r.error?.message ?? ''),
      ]),
      [
        [good.name, true, null, false],
        [noName.name, false, true, true],
        [wrongKey.name, false, true, true],
        [expired.name, false, true, true],
      ],
    );
    assert.equal(sim.stats.writes - writes, 1, 'only the good one reached the controller');
    // The controller refuses them too, as Avi does.
    const direct = await adapter.session.call('POST', '/api/sslkeyandcertificate', {
      name: 'x',
      certificate: { certificate: noName.certPem },
      key: noName.keyPem,
    });
    assert.equal(direct.status, 400);
    assert.match(JSON.stringify(direct.body), /Common Name or a Subject Alternative Name/);
  });

  it('a certificate an HTTPS virtual service uses cannot go before it (InUse), and goes after', async (t) => {
    const { adapter } = await setup(t);
    const a = await modelCertificate('c1--default-a-tls', ['a.example.com']);
    const s: LbState = { pools: [pool], virtualServices: [https([a.name])], certificates: [a] };
    await sync(adapter, s);
    const r = await adapter.apply([{ op: 'delete', kind: 'certificate', name: a.name, observed: a }]);
    assert.equal(r[0]!.error?.code, 'InUse');
    assert.equal(r[0]!.error?.terminal, false);
    const gone = await sync(adapter, { pools: [pool], virtualServices: [], certificates: [] });
    assert.deepEqual(
      gone.results.filter((x) => !x.ok),
      [],
    );
  });
});
