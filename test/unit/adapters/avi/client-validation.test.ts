/**
 * Issue 48, item 2 on Avi: client certificates at an HTTPS virtual service (a Gateway's
 * `spec.tls.frontend`) through a change, on the Avi simulator (which holds every object to the
 * bundled field model, ApplicationProfile and its HTTP profile among them, and refuses a delete of
 * what is still referred to). The service and its SNI children point at an application profile of
 * their own (REQUIRE, or REQUEST with every PKI error allowed for AllowInsecureFallback) and a PKI
 * profile with the CA bundle; a new CA and the fallback change them in place; validation removed
 * puts System-Secure-HTTP back and removes both profiles, as a deleted service does. Hand edits on
 * the controller (the mode set to NONE, errors allowed under REQUIRE, another CA trusted) are read as
 * what they are and written again; a verified subject in a header is refused by name.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { clientAppProfileName, clientPkiProfileName } from '../../../../adapters/avi/client-validation.ts';
import { AviSimulator } from '../../../../sim/avi/simulator.ts';
import { plan } from '../../../../src/plan/diff.ts';
import type { Certificate, ClientValidation, L7VirtualService, Pool } from '../../../../src/model/types.ts';
import { caBundle } from '../../../../src/source/gateway/backend-tls.ts';
import { modelCertificate, testAuthority } from '../../../support/certs.ts';
import { aviAdapter } from '../../../support/lb-fixtures.ts';
import * as kit from '../../../support/model.ts';

type Raw = Record<string, unknown>;
const VS = 'c1--gw-infra.mtls-HTTPS-443';
const POOL = 'c1--infra-web-8080.l7';

async function pem(name: string): Promise<string> {
  const b = caBundle((await testAuthority(name)).cert);
  if (!('pem' in b)) throw new Error(b.problem);
  return b.pem;
}

async function setup(t: { after: (fn: () => Promise<void>) => void }) {
  const sim = new AviSimulator();
  const adapter = aviAdapter(await sim.start());
  t.after(async () => {
    await adapter.close();
    await sim.close();
  });
  const [one, two] = await Promise.all([
    modelCertificate('c1--infra-one', ['one.example.com']),
    modelCertificate('c1--infra-two', ['two.example.com']),
  ]);
  const pool: Pool = kit.pool(POOL, [kit.member('192.0.2.1', 61000, { node: 'n1', pod: 'infra/web-0' })]);
  const state = (client?: ClientValidation, certs: Certificate[] = [one, two]) => ({
    pools: [pool],
    certificates: certs,
    virtualServices: [
      {
        kind: 'l7',
        name: VS,
        vip: '192.0.2.60',
        port: 443,
        ingressClass: 'npl-lb',
        routes: [],
        defaultPool: POOL,
        protocol: 'HTTPS',
        certificates: certs.map((c) => c.name),
        ...(client ? { clientValidation: client } : {}),
      } satisfies L7VirtualService,
    ],
  });
  const apply = async (s: ReturnType<typeof state>) => {
    const results = await adapter.apply(plan(s, await adapter.observe()).changes);
    return {
      failed: results
        .filter((r) => !r.ok)
        .map((r) => `${r.change.kind} ${r.change.name}: ${r.error?.message}`),
      left: plan(s, await adapter.observe()).changes.map((c) => `${c.op} ${c.kind} ${c.name}`),
    };
  };
  const profile = () => sim.objects('applicationprofile').get(clientAppProfileName(VS));
  const pki = () => sim.objects('pkiprofile').get(clientPkiProfileName(VS));
  const uuidOf = (ref: unknown) => String(ref).split('/').pop();
  /** The application profile each of our virtual services (parent and SNI children) points at, by name. */
  const profilesOfServices = () =>
    [...sim.objects('virtualservice').values()].map((v) => {
      const uuid = uuidOf(v.application_profile_ref);
      return [...sim.objects('applicationprofile').values()].find((p) => p.uuid === uuid)?.name;
    });
  return { sim, apply, state, profile, pki, profilesOfServices };
}

describe('Avi client certificates at an HTTPS virtual service', () => {
  it('an application and a PKI profile of its own; the fallback and a new CA in place; removed, System-Secure-HTTP again', async (t) => {
    const { apply, state, profile, pki, profilesOfServices } = await setup(t);
    const [ca, next] = [await pem('clients one'), await pem('clients two')];
    let r = await apply(state({ ca, insecureFallback: false }));
    assert.deepEqual(r, { failed: [], left: [] }, 'applied, observed back with nothing to write');
    const http = profile()!.http_profile as Raw;
    assert.equal(profile()!.type, 'APPLICATION_PROFILE_TYPE_HTTP');
    assert.equal(http.ssl_client_certificate_mode, 'SSL_CLIENT_CERTIFICATE_REQUIRE');
    assert.equal(http.websockets_enabled, true, 'WebSocket proxied, as the System profiles do');
    assert.equal(String(http.pki_profile_ref).split('/').pop(), pki()!.uuid);
    assert.equal((pki()!.ca_certs as { certificate: string }[])[0]!.certificate, ca.trim());
    assert.equal(pki()!.allow_pki_errors, undefined, 'no error allowed: a client must verify');
    assert.deepEqual(
      profilesOfServices(),
      [clientAppProfileName(VS), clientAppProfileName(VS)],
      'the parent and its SNI child both ask',
    );

    // AllowInsecureFallback: asked, served whatever it shows; the same objects, in place.
    const [uuid, pkiUuid] = [profile()!.uuid, pki()!.uuid];
    r = await apply(state({ ca, insecureFallback: true }));
    assert.deepEqual(r, { failed: [], left: [] });
    assert.equal(
      (profile()!.http_profile as Raw).ssl_client_certificate_mode,
      'SSL_CLIENT_CERTIFICATE_REQUEST',
    );
    assert.deepEqual(pki()!.allow_pki_errors, ['ALLOW_ALL_ERRORS']);
    // A new CA: the PKI profile's certificates replaced in place.
    r = await apply(state({ ca: next, insecureFallback: false }));
    assert.deepEqual(r, { failed: [], left: [] });
    assert.deepEqual([profile()!.uuid, pki()!.uuid], [uuid, pkiUuid], 'updated in place');
    assert.equal((pki()!.ca_certs as { certificate: string }[])[0]!.certificate, next.trim());

    // Validation removed: System-Secure-HTTP, and both profiles gone after the services let go.
    r = await apply(state());
    assert.deepEqual(r, { failed: [], left: [] });
    assert.equal(profile(), undefined);
    assert.equal(pki(), undefined);
    assert.deepEqual(profilesOfServices(), ['System-Secure-HTTP', 'System-Secure-HTTP']);
  });

  it('hand edits on the controller are read as they are and written again', async (t) => {
    const { sim, apply, state, profile, pki } = await setup(t);
    const [ca, other] = [await pem('clients'), await pem('someone else')];
    const want = state({ ca, insecureFallback: false });
    assert.deepEqual(await apply(want), { failed: [], left: [] });
    const edits: [string, () => void][] = [
      [
        'the mode set to NONE',
        () => ((profile()!.http_profile as Raw).ssl_client_certificate_mode = 'SSL_CLIENT_CERTIFICATE_NONE'),
      ],
      ['every error allowed under REQUIRE', () => (pki()!.allow_pki_errors = ['ALLOW_ALL_ERRORS'])],
      ['WebSocket turned off', () => ((profile()!.http_profile as Raw).websockets_enabled = false)],
      [
        'another CA trusted',
        () => ((pki()!.ca_certs as { certificate: string }[])[0]!.certificate = other.trim()),
      ],
    ];
    for (const [what, edit] of edits) {
      edit();
      // As the controller's UI does with every edit.
      for (const o of [profile(), pki()]) if (o) o._last_modified = String(Date.now() * 1000 + 999);
      const r = await apply(want);
      assert.deepEqual(r, { failed: [], left: [] }, what);
      assert.equal(
        (profile()!.http_profile as Raw).ssl_client_certificate_mode,
        'SSL_CLIENT_CERTIFICATE_REQUIRE',
        what,
      );
      assert.equal(pki()!.allow_pki_errors, undefined, what);
      assert.equal((profile()!.http_profile as Raw).websockets_enabled, true, what);
      assert.equal((pki()!.ca_certs as { certificate: string }[])[0]!.certificate, ca.trim(), what);
    }
    assert.ok(sim.objects('virtualservice').size > 0);
  });

  it('a deleted service takes its profiles; a subject header is refused by name before anything is written', async (t) => {
    const { sim, apply, state, profile, pki } = await setup(t);
    const ca = await pem('clients');
    assert.deepEqual(await apply(state({ ca, insecureFallback: false })), { failed: [], left: [] });
    const gone = await apply({ pools: [], certificates: [], virtualServices: [] });
    assert.deepEqual(gone, { failed: [], left: [] });
    assert.equal(profile(), undefined);
    assert.equal(pki(), undefined);

    const r = await apply(state({ ca, insecureFallback: false, subjectHeader: 'X-Client-Subject' }));
    assert.equal(r.failed.length, 1, r.failed.join('; '));
    assert.match(
      r.failed[0]!,
      new RegExp(`^virtualService ${VS}: .*subject is not sent to members by the Avi adapter`),
    );
    assert.equal(sim.objects('virtualservice').get(VS), undefined, 'never served without what it asked');
    assert.equal(profile(), undefined);
  });
});
