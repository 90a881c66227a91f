/**
 * Issue 48, item 1 on Avi: a pool's TLS to its members (Pool.backendTls) through a change. The pool
 * is written with the system SSL profile, its SNI, the names checked and a PKI profile of its own
 * holding the CA bundle (written first); a rotated CA updates that profile in place (the same
 * object, the pool untouched); TLS taken away leaves the pool in clear text and its PKI profile
 * removed after it; a pool deleted takes its profile with it. What cannot be trusted is refused
 * before anything is written (terminal): the system CAs (Avi has no store of its own to trust), a
 * bundle with no certificate, a name that is not a DNS name.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { pkiProfileName } from '../../../../adapters/avi/pool-tls.ts';
import { AviSimulator } from '../../../../sim/avi/simulator.ts';
import { plan } from '../../../../src/plan/diff.ts';
import {
  type BackendTls,
  type Certificate,
  type L7VirtualService,
  type Pool,
  SYSTEM_CA,
} from '../../../../src/model/types.ts';
import { caBundle } from '../../../../src/source/gateway/backend-tls.ts';
import { modelCertificate, testAuthority } from '../../../support/certs.ts';
import { aviAdapter } from '../../../support/lb-fixtures.ts';
import * as kit from '../../../support/model.ts';

const POOL = 'c1--default-web-443.l7';

async function pem(name: string): Promise<string> {
  const b = caBundle((await testAuthority(name)).cert);
  if (!('pem' in b)) throw new Error(b.problem);
  return b.pem;
}

const tlsPool = (tls: BackendTls | undefined): Pool => ({
  ...kit.pool(POOL, [kit.member('192.0.2.1', 61000, { node: 'n1', pod: 'default/web-0' })], {
    health: 'http',
    service: 'default/web',
    servicePort: 'https',
  }),
  ...(tls ? { backendTls: tls } : {}),
});

const vs: L7VirtualService = {
  kind: 'l7',
  name: 'c1--ingress-npl',
  vip: '192.0.2.20',
  port: 80,
  ingressClass: 'npl',
  defaultPool: undefined,
  routes: [{ host: 'a.example', path: '/', pathType: 'Prefix', pool: POOL, source: 'default/ing' }],
};

async function setup(t: { after: (fn: () => Promise<void>) => void }) {
  const sim = new AviSimulator();
  const adapter = aviAdapter(await sim.start());
  t.after(async () => {
    await adapter.close();
    await sim.close();
  });
  const apply = async (state: {
    pools: Pool[];
    virtualServices: L7VirtualService[];
    certificates?: Certificate[];
  }) => {
    const results = await adapter.apply(plan(state, await adapter.observe()).changes);
    return { results, left: plan(state, await adapter.observe()).changes };
  };
  const sync = (p: Pool) => apply({ pools: [p], virtualServices: [vs] });
  const pki = () => sim.objects('pkiprofile').get(pkiProfileName(POOL));
  return { sim, apply, sync, pki };
}

describe('Avi pools with TLS to their members', () => {
  it('written with SNI, names checked and a PKI profile; a rotated CA updates it in place; TLS removed, the profile goes', async (t) => {
    const { sim, sync, pki } = await setup(t);
    const [ca, next] = [await pem('first CA'), await pem('next CA')];
    const tls: BackendTls = { serverName: 'web.internal', verifyNames: ['web.internal'], ca };
    let r = await sync(tlsPool(tls));
    assert.deepEqual(
      r.results.filter((x) => !x.ok),
      [],
    );
    assert.deepEqual(r.left, [], 'observed back as written');
    const p = sim.objects('pool').get(POOL)!;
    assert.equal(p.sni_enabled, true);
    assert.equal(p.server_name, 'web.internal');
    assert.equal(p.host_check_enabled, true);
    assert.deepEqual(p.domain_name, ['web.internal']);
    assert.equal(String(p.pki_profile_ref).split('/').pop(), pki()!.uuid);
    assert.equal((pki()!.ca_certs as { certificate: string }[])[0]!.certificate, ca.trim());

    // Rotation: the same profile object, its CA replaced.
    const uuid = pki()!.uuid;
    r = await sync(tlsPool({ ...tls, ca: next }));
    assert.deepEqual(
      r.results.filter((x) => !x.ok),
      [],
    );
    assert.deepEqual(r.left, []);
    assert.equal(pki()!.uuid, uuid, 'updated in place');
    assert.equal((pki()!.ca_certs as { certificate: string }[])[0]!.certificate, next.trim());

    // Clear text again: the TLS fields gone, then the profile.
    r = await sync(tlsPool(undefined));
    assert.deepEqual(
      r.results.filter((x) => !x.ok),
      [],
    );
    assert.deepEqual(r.left, []);
    assert.equal(sim.objects('pool').get(POOL)!.pki_profile_ref, undefined);
    assert.equal(sim.objects('pool').get(POOL)!.sni_enabled, undefined);
    assert.equal(pki(), undefined, 'the profile is removed once no pool uses it');
  });

  it('what cannot be trusted is refused before anything is written: the system CAs, no certificate, a bad name', async (t) => {
    const { sim, sync, pki } = await setup(t);
    const ca = await pem('a CA');
    for (const tls of [
      { serverName: 'web.internal', verifyNames: ['web.internal'], ca: SYSTEM_CA },
      { serverName: 'web.internal', verifyNames: ['web.internal'], ca: 'not a certificate' },
      { serverName: 'web.internal" x', verifyNames: ['web.internal'], ca },
      { serverName: 'web.internal', verifyNames: ['*.bad name'], ca },
    ]) {
      const { results } = await sync(tlsPool(tls));
      const failed = results.find((x) => x.change.kind === 'pool' && !x.ok);
      assert.ok(failed, JSON.stringify(tls).slice(0, 80));
      assert.equal(failed.error?.terminal, true);
      assert.equal(sim.objects('pool').get(POOL), undefined, 'no pool written');
      assert.equal(pki(), undefined, 'no profile written');
    }
  });

  it('a deleted pool takes its PKI profile with it', async (t) => {
    const { sim, apply, sync, pki } = await setup(t);
    const tls: BackendTls = {
      serverName: 'web.internal',
      verifyNames: ['web.internal'],
      ca: await pem('a CA'),
    };
    await sync(tlsPool(tls));
    assert.ok(pki());
    // The route moves to another pool: the TLS pool leaves the desired state.
    const other = { ...tlsPool(undefined), name: 'c1--default-other-80.l7' };
    const { results, left } = await apply({
      pools: [other],
      virtualServices: [{ ...vs, routes: [{ ...vs.routes[0]!, pool: other.name }] }],
    });
    assert.deepEqual(
      results.filter((x) => !x.ok),
      [],
    );
    assert.deepEqual(left, []);
    assert.equal(sim.objects('pool').get(POOL), undefined);
    assert.equal(pki(), undefined);
  });

  it("presents a Gateway's client certificate to the members: written after the certificate, read back, and the certificate removed only after the pool lets it go", async (t) => {
    const { sim, apply, pki } = await setup(t);
    const cert = await modelCertificate('c1--gw-client', ['gateway.example']);
    const tls: BackendTls = {
      serverName: 'web.internal',
      verifyNames: ['web.internal'],
      ca: await pem('a CA'),
      clientCertificate: cert.name,
    };
    let r = await apply({ pools: [tlsPool(tls)], virtualServices: [vs], certificates: [cert] });
    assert.deepEqual(
      r.results.filter((x) => !x.ok),
      [],
    );
    assert.deepEqual(r.left, [], 'observed back, the certificate presented included');
    const certUuid = sim.objects('sslkeyandcertificate').get(cert.name)!.uuid;
    assert.equal(
      String(sim.objects('pool').get(POOL)!.ssl_key_and_certificate_ref).split('/').pop(),
      certUuid,
    );
    assert.ok(pki());
    // The Gateway no longer names it: the pool stops presenting it, then the certificate goes.
    const { clientCertificate: _gone, ...plain } = tls;
    r = await apply({ pools: [tlsPool(plain)], virtualServices: [vs], certificates: [] });
    assert.deepEqual(
      r.results.filter((x) => !x.ok),
      [],
      'no delete refused as still in use',
    );
    assert.deepEqual(r.left, []);
    assert.equal(sim.objects('pool').get(POOL)!.ssl_key_and_certificate_ref, undefined);
    assert.equal(sim.objects('sslkeyandcertificate').get(cert.name), undefined);
  });
});
