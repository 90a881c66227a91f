/**
 * Issue 48, item 2: client certificates at the front door. A Gateway's `spec.tls.frontend` (the
 * default, or a port's entry) on a load balancer that validates them: the HTTPS listeners of that
 * port carry the CA (parsed and written again) to their virtual service, required or with the
 * insecure fallback (the Gateway then says InsecureFrontendValidationMode, and stops saying it
 * when the mode goes back); a reference that does not resolve is named on the listener with the
 * spec's reasons, and a listener none of whose CAs resolves is not accepted and no virtual service
 * serves its port unchecked. Across a change: a CA rotated, a ConfigMap deleted, the fallback
 * turned off.
 */
import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { caConfigMapSchema } from '../../../src/kube/config-maps.ts';
import { gatewaySchema } from '../../../src/kube/gateway-objects.ts';
import { grant, INFRA, listenerConditions, pass, vsOf, WEB } from './gateway-support.ts';
import { testAuthority, testCertificate, type TestCertificate } from '../../support/certs.ts';

let ca: TestCertificate;
let other: TestCertificate;
let serving: TestCertificate;
before(async () => {
  [ca, other, serving] = await Promise.all([
    testAuthority('clients one'),
    testAuthority('clients two'),
    testCertificate({ dns: ['*.example.org', 'example.org'] }),
  ]);
});

const configMap = (name: string, caCrt: string | undefined, namespace = INFRA) =>
  caConfigMapSchema.parse({
    metadata: { namespace, name, uid: `u-${namespace}-${name}`, resourceVersion: '1' },
    data: caCrt === undefined ? { other: 'x' } : { 'ca.crt': caCrt },
  });

const ref = (name: string, extra: Record<string, unknown> = {}) => ({
  group: '',
  kind: 'ConfigMap',
  name,
  ...extra,
});

function gateway(frontend: Record<string, unknown>, annotations: Record<string, string> = {}) {
  const tls = { certificateRefs: [{ group: '', kind: 'Secret', name: 'cert' }] };
  return gatewaySchema.parse({
    metadata: {
      namespace: INFRA,
      name: 'mtls',
      generation: 1,
      creationTimestamp: '2026-01-01T00:00:00Z',
      annotations,
    },
    spec: {
      gatewayClassName: 'npl-lb',
      tls: { frontend },
      listeners: [
        { name: 'http', port: 80, protocol: 'HTTP' },
        { name: 'https', port: 443, protocol: 'HTTPS', tls },
        { name: 'second', port: 8443, protocol: 'HTTPS', hostname: 'second.example.org', tls },
      ],
    },
  });
}

function run(
  frontend: Record<string, unknown>,
  cms: ReturnType<typeof configMap>[],
  grants: ReturnType<typeof grant>[] = [],
  o: { annotations?: Record<string, string>; subjectHeader?: boolean } = {},
) {
  const r = pass({
    gateways: [gateway(frontend, o.annotations)],
    configMaps: cms,
    grants,
    secrets: [{ namespace: INFRA, name: 'cert', cert: serving }],
    support: { clientCertificates: true, clientSubjectHeader: o.subjectHeader ?? true },
  });
  const gw = `${INFRA}/mtls`;
  return {
    r,
    listener: (l: string) => listenerConditions(r, gw, l),
    message: (l: string, type: string) =>
      r.gateways
        .get(gw)
        ?.listeners.find((x) => x.name === l)
        ?.conditions.find((c) => c.type === type)?.message ?? '',
    vs: (port: number) => vsOf(r, gw, port === 80 ? 'HTTP' : 'HTTPS', port),
    gateway: () =>
      (r.gateways.get(gw)?.conditions ?? []).map(
        (c) => `${c.type}=${c.status ? 'True' : 'False'}/${c.reason}`,
      ),
  };
}

const x509 = (pem: string) => pem.replace(/\r/g, '').trim();

describe('Gateway client certificate validation (spec.tls.frontend)', () => {
  it('the default and a port entry: each HTTPS port carries its own CA, required; HTTP asks none', () => {
    const t = run(
      {
        default: { validation: { caCertificateRefs: [ref('clients')] } },
        perPort: [{ port: 8443, tls: { validation: { caCertificateRefs: [ref('per-port')] } } }],
      },
      [configMap('clients', ca.cert), configMap('per-port', other.cert)],
    );
    for (const l of ['http', 'https', 'second']) {
      assert.ok(t.listener(l).includes('Accepted=True/Accepted'), `${l}: ${t.listener(l).join()}`);
      assert.ok(t.listener(l).includes('Programmed=True/Programmed'), l);
      assert.ok(t.listener(l).includes('ResolvedRefs=True/ResolvedRefs'), l);
    }
    assert.equal(x509(t.vs(443)!.clientValidation!.ca), x509(ca.cert));
    assert.equal(t.vs(443)!.clientValidation!.insecureFallback, false);
    assert.equal(x509(t.vs(8443)!.clientValidation!.ca), x509(other.cert));
    assert.equal(t.vs(80)!.clientValidation, undefined, 'a plain HTTP port asks no certificate');
    assert.ok(!t.gateway().some((c) => c.startsWith('InsecureFrontendValidationMode')));
  });

  it('AllowInsecureFallback: asked, not required, and said on the Gateway until the mode goes back', () => {
    const cms = [configMap('clients', ca.cert)];
    const fallback = run(
      { default: { validation: { caCertificateRefs: [ref('clients')], mode: 'AllowInsecureFallback' } } },
      cms,
    );
    assert.equal(fallback.vs(443)!.clientValidation!.insecureFallback, true);
    assert.ok(fallback.gateway().includes('InsecureFrontendValidationMode=True/ConfigurationChanged'));
    const back = run(
      { default: { validation: { caCertificateRefs: [ref('clients')], mode: 'AllowValidOnly' } } },
      cms,
    );
    assert.equal(back.vs(443)!.clientValidation!.insecureFallback, false);
    assert.ok(
      !back.gateway().some((c) => c.startsWith('InsecureFrontendValidationMode')),
      back.gateway().join(),
    );
  });

  it('references that do not resolve: named with the spec reason; with none valid the port is not served', () => {
    const cases: [string, Record<string, unknown>, string][] = [
      ['missing', ref('does-not-exist'), 'InvalidCACertificateRef'],
      ['another kind', { group: '', kind: 'Service', name: 'infra-backend-v2' }, 'InvalidCACertificateKind'],
      ['a Secret', { group: '', kind: 'Secret', name: 'cert' }, 'InvalidCACertificateKind'],
      ['another namespace, no grant', ref('web-ca', { namespace: WEB }), 'RefNotPermitted'],
      ['no ca.crt', ref('no-key'), 'InvalidCACertificateRef'],
    ];
    for (const [what, r, reason] of cases) {
      const t = run({ perPort: [{ port: 443, tls: { validation: { caCertificateRefs: [r] } } }] }, [
        configMap('no-key', undefined),
        configMap('web-ca', ca.cert, WEB),
      ]);
      assert.deepEqual(
        t.listener('https').slice(0, 3),
        ['Accepted=False/NoValidCACertificate', 'Programmed=False/Invalid', `ResolvedRefs=False/${reason}`],
        what,
      );
      assert.equal(t.vs(443), undefined, `${what}: no virtual service serves port 443 unchecked`);
      assert.ok(
        t.listener('second').includes('Accepted=True/Accepted'),
        `${what}: another port is not concerned`,
      );
      assert.equal(t.vs(8443)?.clientValidation, undefined);
    }
  });

  it('a ReferenceGrant lets a CA of another namespace in', () => {
    const t = run(
      { default: { validation: { caCertificateRefs: [ref('web-ca', { namespace: WEB })] } } },
      [configMap('web-ca', ca.cert, WEB)],
      [grant(WEB, 'Gateway', INFRA, 'ConfigMap')],
    );
    assert.ok(t.listener('https').includes('Accepted=True/Accepted'), t.listener('https').join());
    assert.equal(x509(t.vs(443)!.clientValidation!.ca), x509(ca.cert));
  });

  it('hostile bundles are refused for the listener; a mix serves the valid CAs and names the rest', () => {
    const hostile: [string, string][] = [
      ['a megabyte', `${ca.cert}\n${'#'.repeat(1024 * 1024)}`],
      ['not PEM', 'verify none\n'],
      ['a broken certificate', '-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n'],
    ];
    for (const [what, text] of hostile) {
      const t = run({ default: { validation: { caCertificateRefs: [ref('bad')] } } }, [
        configMap('bad', text),
      ]);
      assert.ok(t.listener('https').includes('Accepted=False/NoValidCACertificate'), what);
      assert.ok(t.listener('https').includes('ResolvedRefs=False/InvalidCACertificateRef'), what);
      assert.equal(t.vs(443), undefined, what);
    }
    // Text around the certificate never reaches the device: the bundle is written from its parse.
    const wrapped = run({ default: { validation: { caCertificateRefs: [ref('wrapped')] } } }, [
      configMap('wrapped', `verify none\n${ca.cert}\nca-ignore-err all\n`),
    ]);
    assert.equal(x509(wrapped.vs(443)!.clientValidation!.ca), x509(ca.cert));
    const mixed = run({ default: { validation: { caCertificateRefs: [ref('missing'), ref('good')] } } }, [
      configMap('good', other.cert),
    ]);
    assert.ok(mixed.listener('https').includes('Accepted=True/Accepted'));
    assert.ok(mixed.listener('https').includes('ResolvedRefs=False/InvalidCACertificateRef'));
    assert.match(
      mixed.message('https', 'ResolvedRefs'),
      /caCertificateRefs\[0\]: ConfigMap .*\/missing not found/,
    );
    assert.equal(x509(mixed.vs(443)!.clientValidation!.ca), x509(other.cert));
  });

  it('across a change: the CA rotated follows; the ConfigMap deleted takes the port down, never open', () => {
    const frontend = { default: { validation: { caCertificateRefs: [ref('clients')] } } };
    const first = run(frontend, [configMap('clients', ca.cert)]);
    const both = run(frontend, [configMap('clients', `${ca.cert}${other.cert}`)]);
    assert.notEqual(first.vs(443)!.clientValidation!.ca, both.vs(443)!.clientValidation!.ca);
    assert.equal(both.vs(443)!.clientValidation!.ca.match(/BEGIN CERTIFICATE/g)?.length, 2);
    const gone = run(frontend, []);
    assert.equal(gone.vs(443), undefined);
    assert.ok(gone.listener('https').includes('Accepted=False/NoValidCACertificate'));
  });

  it('the verified client’s subject in the header a Gateway annotation names; a bad name or a device without it refused', () => {
    const frontend = { default: { validation: { caCertificateRefs: [ref('clients')] } } };
    const cms = [configMap('clients', ca.cert)];
    const ann = (v: string) => ({ annotations: { 'npl-lb.io/client-certificate-header': v } });
    const named = run(frontend, cms, [], ann('X-Client-Subject'));
    assert.equal(named.vs(443)!.clientValidation!.subjectHeader, 'X-Client-Subject');
    assert.equal(run(frontend, cms).vs(443)!.clientValidation!.subjectHeader, undefined);
    for (const bad of ['X-A\r\nX-Injected: 1', 'two words', ''])
      assert.ok(
        run(frontend, cms, [], ann(bad)).listener('https').includes('Accepted=False/UnsupportedValue'),
        bad,
      );
    const unable = run(frontend, cms, [], { ...ann('X-Client-Subject'), subjectHeader: false });
    assert.ok(unable.listener('https').includes('Accepted=False/UnsupportedValue'));
    assert.match(unable.message('https', 'Accepted'), /does not send a client's subject to members/);
    assert.equal(unable.vs(443), undefined);
  });

  it('a mode the API server should have refused is refused by name', () => {
    const t = run(
      { default: { validation: { caCertificateRefs: [ref('clients')], mode: 'AllowAnything' } } },
      [configMap('clients', ca.cert)],
    );
    assert.ok(t.listener('https').includes('Accepted=False/UnsupportedValue'));
    assert.match(
      t.message('https', 'Accepted'),
      /mode: "AllowAnything" is not AllowValidOnly or AllowInsecureFallback/,
    );
    assert.equal(t.vs(443), undefined);
  });
});
