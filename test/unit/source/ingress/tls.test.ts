/**
 * Ingress `tls:` with real certificates made in the test: the HTTPS virtual service of a class and
 * its certificates, every way a Secret can be bad (each a Warning naming it, its hosts off HTTPS,
 * nothing else touched), rotation in place, an adapter without certificates, and a restart with
 * nothing changed making no write.
 */
import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { MemoryAdapter } from '../../../../adapters/memory/adapter.ts';
import { MemoryLoadBalancer } from '../../../../adapters/memory/device.ts';
import type { Capabilities } from '../../../../src/adapter/contract.ts';
import { parseControllerConfig } from '../../../../src/config/controller-config.ts';
import {
  ingressClassSchema,
  ingressSchema,
  nodeSchema,
  serviceSchema,
  tlsSecretSchema,
} from '../../../../src/kube/objects.ts';
import type { L7VirtualService } from '../../../../src/model/types.ts';
import { plan } from '../../../../src/plan/diff.ts';
import { applyCapabilities } from '../../../../src/source/capabilities.ts';
import { certificateFromSecret, namesCover } from '../../../../src/source/certificates.ts';
import { buildDesired, type ClusterView } from '../../../../src/source/desired.ts';
import { type TestCertificate, testCertificate, tlsSecret } from '../../../support/certs.ts';

const cfg = parseControllerConfig('clusterName: c1\nvip: {cidrs: [192.0.2.0/28]}\n');
const secret = (name: string, c: TestCertificate, type?: string, rv = '1') => {
  const raw = tlsSecret('shop', name, c, type) as { metadata: Record<string, unknown> };
  raw.metadata.resourceVersion = rv;
  raw.metadata.uid = `uid-${name}`;
  return tlsSecretSchema.parse(raw);
};
const rule = (host: string, service = 'web') => ({
  host,
  http: {
    paths: [{ path: '/', pathType: 'Prefix', backend: { service: { name: service, port: { number: 80 } } } }],
  },
});
const ingress = (name: string, hosts: string[], tls: { hosts?: string[]; secretName?: string }[]) =>
  ingressSchema.parse({
    metadata: { name, namespace: 'shop', resourceVersion: '1' },
    spec: { ingressClassName: 'npl', rules: hosts.map((h) => rule(h)), tls },
  });
const base = (v: Partial<ClusterView>): ClusterView => ({
  services: [
    serviceSchema.parse({
      metadata: { name: 'web', namespace: 'shop', resourceVersion: '1' },
      spec: { selector: { app: 'web' }, ports: [{ port: 80 }] },
    }),
  ],
  ingressClasses: [
    ingressClassSchema.parse({
      metadata: { name: 'npl' },
      spec: { controller: 'npl-lb.io/ingress-controller' },
    }),
  ],
  ingresses: [],
  pods: [],
  nodes: [nodeSchema.parse({ metadata: { name: 'n1' } })],
  ...v,
});
const l7 = (r: ReturnType<typeof buildDesired>, name: string) =>
  r.state.virtualServices.find((v): v is L7VirtualService => v.kind === 'l7' && v.name === name);
const hosts = (vs: L7VirtualService | undefined) => vs?.routes.map((r) => r.host).sort();
const warnings = (r: ReturnType<typeof buildDesired>) =>
  r.findings.filter((f) => f.type === 'Warning').map((f) => `${f.key} ${f.reason}: ${f.message}`);

let a: TestCertificate;
let a2: TestCertificate;
let wild: TestCertificate;
let expired: TestCertificate;
let anonymous: TestCertificate;
before(async () => {
  [a, a2, wild, expired, anonymous] = await Promise.all([
    testCertificate({ dns: ['a.example.com'] }),
    testCertificate({ dns: ['a.example.com'] }),
    testCertificate({ dns: ['*.example.com'], cn: null }),
    testCertificate({ dns: ['a.example.com'], notAfter: new Date(Date.now() - 3600_000) }),
    testCertificate({ dns: [], cn: null }),
  ]);
});

describe('certificates from Secrets', () => {
  it('a good Secret: the chain and key re-encoded, SNI names, fingerprint, expiry; the key matches', () => {
    const r = certificateFromSecret(secret('a-tls', a), 'c1--shop.a-tls', Date.now());
    assert.ok('certificate' in r, JSON.stringify(r));
    const c = r.certificate;
    assert.equal(c.name, 'c1--shop.a-tls');
    assert.equal(c.source, 'shop/a-tls');
    assert.deepEqual(c.sniNames, ['a.example.com']);
    assert.match(c.subject, /CN=a\.example\.com/);
    assert.match(c.fingerprint, /^([0-9A-F]{2}:){31}[0-9A-F]{2}$/);
    assert.ok(Date.parse(c.notAfter) > Date.now());
    assert.match(c.certPem, /^-----BEGIN CERTIFICATE-----\n[\s\S]*-----END CERTIFICATE-----\n$/);
    assert.match(c.keyPem, /^-----BEGIN PRIVATE KEY-----\n/);
  });

  it('refuses each bad Secret with the reason in words', () => {
    const now = Date.now();
    const problem = (s: ReturnType<typeof secret>) => {
      const r = certificateFromSecret(s, 'x', now);
      return 'problem' in r ? r.problem : 'accepted';
    };
    assert.match(problem(secret('t', a, 'Opaque')), /not of type kubernetes\.io\/tls/);
    assert.match(problem(secret('t', { cert: 'junk', key: a.key })), /no PEM certificate/);
    assert.match(
      problem(
        secret('t', { cert: '-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n', key: a.key }),
      ),
      /does not parse/,
    );
    assert.match(problem(secret('t', { cert: a.cert, key: a2.key })), /tls\.key does not match/);
    assert.match(
      problem(secret('t', { cert: a.cert, key: 'not a key' })),
      /not an unencrypted PEM private key/,
    );
    assert.match(problem(secret('t', { cert: a.cert, key: '' })), /no tls\.key/);
    assert.match(problem(secret('t', expired)), /expired on/);
    assert.match(problem(secret('t', anonymous)), /neither a common name nor a subject alternative name/);
    // Text around the PEM blocks (a comment, an injection attempt) never reaches the device.
    const padded = certificateFromSecret(
      secret('t', { cert: `evil\n${a.cert}\nbind :1 ssl crt /etc/passwd\n`, key: a.key }),
      'x',
      now,
    );
    assert.ok('certificate' in padded && !padded.certificate.certPem.includes('evil'));
    assert.ok('certificate' in padded && !padded.certificate.certPem.includes('passwd'));
  });

  it('a wildcard covers exactly one label', () => {
    assert.ok(namesCover(['*.example.com'], 'a.example.com'));
    assert.ok(!namesCover(['*.example.com'], 'a.b.example.com'));
    assert.ok(!namesCover(['*.example.com'], 'example.com'));
    assert.ok(namesCover(['a.example.com'], 'a.example.com'));
  });
});

describe('Ingress tls: an HTTPS virtual service per class', () => {
  it('TLS hosts are served on HTTPS with their certificates; hosts without TLS stay on HTTP only', () => {
    const r = buildDesired(
      base({
        ingresses: [
          ingress(
            'shop',
            ['a.example.com', 'b.example.com', 'plain.example.com'],
            [
              { hosts: ['a.example.com'], secretName: 'a-tls' },
              { hosts: ['b.example.com'], secretName: 'wild-tls' },
            ],
          ),
        ],
        secrets: [secret('a-tls', a), secret('wild-tls', wild)],
      }),
      cfg,
    );
    const http = l7(r, 'c1--ingress-npl');
    const https = l7(r, 'c1--ingress-npl_https');
    assert.deepEqual(hosts(http), ['a.example.com', 'b.example.com', 'plain.example.com']);
    assert.equal(https?.protocol, 'HTTPS');
    assert.equal(https?.port, 443);
    assert.equal(https?.vip, http?.vip, 'one VIP per class');
    assert.deepEqual(hosts(https), ['a.example.com', 'b.example.com']);
    assert.deepEqual(https?.certificates, ['c1--shop.a-tls', 'c1--shop.wild-tls']);
    assert.deepEqual(r.state.certificates?.map((c) => c.name).sort(), [
      'c1--shop.a-tls',
      'c1--shop.wild-tls',
    ]);
    assert.deepEqual(r.ingresses.get('shop/shop')?.virtualServices, [
      'c1--ingress-npl',
      'c1--ingress-npl_https',
    ]);
    assert.deepEqual(warnings(r), []);
  });

  it('a missing or bad Secret is a Warning naming it: its hosts are not on HTTPS, the others are', () => {
    const cases: [string, ReturnType<typeof secret> | undefined, RegExp][] = [
      ['missing', undefined, /Secret shop\/bad-tls not found/],
      ['wrong type', secret('bad-tls', a, 'Opaque'), /not of type kubernetes\.io\/tls/],
      ['key mismatch', secret('bad-tls', { cert: a.cert, key: a2.key }), /does not match/],
      ['expired', secret('bad-tls', expired), /expired/],
      ['no CN, no SAN', secret('bad-tls', anonymous), /neither a common name/],
    ];
    for (const [what, bad, message] of cases) {
      const r = buildDesired(
        base({
          ingresses: [
            ingress(
              'shop',
              ['a.example.com', 'b.example.com'],
              [
                { hosts: ['a.example.com'], secretName: 'a-tls' },
                { hosts: ['b.example.com'], secretName: 'bad-tls' },
              ],
            ),
          ],
          secrets: [secret('a-tls', a), ...(bad ? [bad] : [])],
        }),
        cfg,
      );
      assert.deepEqual(hosts(l7(r, 'c1--ingress-npl_https')), ['a.example.com'], what);
      assert.deepEqual(hosts(l7(r, 'c1--ingress-npl')), ['a.example.com', 'b.example.com'], what);
      const w = warnings(r);
      assert.equal(w.length, 1, `${what}: ${w.join('; ')}`);
      assert.match(w[0]!, /^shop\/shop InvalidTLSSecret: spec\.tls\[1\]: /, what);
      assert.match(w[0]!, message, what);
      assert.match(w[0]!, /hosts b\.example\.com not served on HTTPS/, what);
    }
  });

  it('no secretName, an invalid tls host, and a certificate that does not name its host', () => {
    const r = buildDesired(
      base({
        ingresses: [
          ingress(
            'shop',
            ['a.example.com', 'other.example.org'],
            [
              { hosts: ['a.example.com'] },
              { hosts: ['Bad Host'], secretName: 'a-tls' },
              { hosts: ['other.example.org'], secretName: 'a-tls' },
            ],
          ),
        ],
        secrets: [secret('a-tls', a)],
      }),
      cfg,
    );
    const w = warnings(r).join('\n');
    assert.match(w, /InvalidTLSSecret: spec\.tls\[0\]: no secretName/);
    assert.match(w, /InvalidIngressRule: spec\.tls\[1\]\.hosts\[0\]: host "Bad Host"/);
    assert.match(w, /TLSHostMismatch: spec\.tls\[2\]: .*does not name host other\.example\.org/);
    assert.deepEqual(hosts(l7(r, 'c1--ingress-npl_https')), ['other.example.org'], 'served, with a warning');
  });

  it('a tls entry without hosts covers every rule and the default backend', () => {
    const ing = ingressSchema.parse({
      metadata: { name: 'all', namespace: 'shop' },
      spec: {
        ingressClassName: 'npl',
        defaultBackend: { service: { name: 'web', port: { number: 80 } } },
        rules: [rule('a.example.com')],
        tls: [{ secretName: 'wild-tls' }],
      },
    });
    const r = buildDesired(base({ ingresses: [ing], secrets: [secret('wild-tls', wild)] }), cfg);
    const https = l7(r, 'c1--ingress-npl_https');
    assert.deepEqual(hosts(https), ['a.example.com']);
    assert.equal(https?.defaultPool, 'c1--shop-web-80.l7');
  });

  it('rotation updates the certificate in place: one certificate update, no virtual service write; a restart writes nothing', async (t) => {
    const ings = [ingress('shop', ['a.example.com'], [{ hosts: ['a.example.com'], secretName: 'a-tls' }])];
    const device = new MemoryLoadBalancer();
    const lb = new MemoryAdapter({ device, owner: 'c1' });
    t.after(() => lb.close());
    const sync = async (v: ClusterView) => {
      const d = buildDesired(v, cfg);
      const p = plan(d.state, await lb.observe());
      const results = await lb.apply(p.changes);
      assert.deepEqual(
        results.filter((x) => !x.ok),
        [],
      );
      return p.changes.map((c) => `${c.op} ${c.kind} ${c.name}`);
    };
    const first = await sync(base({ ingresses: ings, secrets: [secret('a-tls', a)] }));
    assert.ok(
      first.indexOf('create certificate c1--shop.a-tls') <
        first.indexOf('create virtualService c1--ingress-npl_https'),
    );
    assert.deepEqual(
      await sync(base({ ingresses: ings, secrets: [secret('a-tls', a)] })),
      [],
      'a restart makes 0 writes',
    );
    const rotated = await sync(base({ ingresses: ings, secrets: [secret('a-tls', a2, undefined, '2')] }));
    assert.deepEqual(rotated, ['update certificate c1--shop.a-tls']);
    const held = [...device.certificates.values()][0]!.cert;
    assert.equal(held.certPem.trim(), a2.cert.trim().replace(/\r\n/g, '\n'));
    // The Secret goes: the HTTPS virtual service goes first, then its certificate.
    const gone = await sync(base({ ingresses: ings }));
    assert.deepEqual(gone, [
      'delete virtualService c1--ingress-npl_https',
      'delete certificate c1--shop.a-tls',
    ]);
  });

  it('an adapter without certificates: the HTTPS virtual service and its certificates are not sent, with a Warning', () => {
    const r = buildDesired(
      base({
        ingresses: [ingress('shop', ['a.example.com'], [{ hosts: ['a.example.com'], secretName: 'a-tls' }])],
        secrets: [secret('a-tls', a)],
      }),
      cfg,
    );
    const caps: Capabilities = {
      l4: { tcp: true, udp: false },
      l7: true,
      memberNodeTag: true,
      drainingMembers: true,
    };
    const c = applyCapabilities(r, caps, 'haproxy');
    assert.deepEqual(
      c.state.virtualServices.map((v) => v.name),
      ['c1--ingress-npl'],
    );
    assert.equal(c.state.certificates, undefined);
    assert.deepEqual(c.ingresses.get('shop/shop')?.unsupported, ['c1--ingress-npl_https']);
    assert.match(
      c.findings.map((f) => f.message).join('\n'),
      /haproxy load balancer does not support TLS termination \(HTTPS\): the HTTPS hosts of IngressClass npl is not served/,
    );
  });

  it('npl-lb.io/ssl-redirect: the HTTPS hosts answer plain HTTP with a 301 to HTTPS; a host without a certificate is served and said; a bad value is said and off', () => {
    const withTls = (annotation: string | undefined, https = 443) => {
      const ing = ingress(
        'shop',
        ['a.example.com', 'b.example.com'],
        [{ hosts: ['a.example.com'], secretName: 'a-tls' }],
      );
      if (annotation !== undefined) ing.metadata.annotations['npl-lb.io/ssl-redirect'] = annotation;
      return buildDesired(
        base({ ingresses: [ing], secrets: [secret('a-tls', a)] }),
        parseControllerConfig(`clusterName: c1\nvip: {cidrs: [192.0.2.0/28]}\ningressHttpsPort: ${https}\n`),
      );
    };
    const on = withTls('true', 8443);
    const http = l7(on, 'c1--ingress-npl')!;
    const byHost = new Map(http.routes.map((r) => [r.host, r]));
    assert.deepEqual(byHost.get('a.example.com')!.redirect, { scheme: 'https', port: 8443, statusCode: 301 });
    assert.equal(byHost.get('a.example.com')!.pool, '');
    assert.equal(byHost.get('b.example.com')!.redirect, undefined, 'no certificate: served over HTTP');
    assert.ok(byHost.get('b.example.com')!.pool);
    const https = on.state.virtualServices.find(
      (v): v is L7VirtualService => v.kind === 'l7' && v.protocol === 'HTTPS',
    )!;
    assert.deepEqual(
      https.routes.map((r) => `${r.host} ${r.pool !== '' && r.redirect === undefined}`),
      ['a.example.com true'],
    );
    assert.match(warnings(on).join('\n'), /ssl-redirect: no certificate in tls: for b\.example\.com/);
    // On 443 the redirect names no port (the scheme's own).
    const std = new Map(l7(withTls('true'), 'c1--ingress-npl')!.routes.map((r) => [r.host, r]));
    assert.deepEqual(std.get('a.example.com')!.redirect, { scheme: 'https', statusCode: 301 });
    // Off, absent or bad: both hosts served over HTTP; the bad value is a Warning.
    for (const v of ['false', undefined, 'yes']) {
      const r = withTls(v);
      assert.ok(
        l7(r, 'c1--ingress-npl')!.routes.every((x) => x.redirect === undefined && x.pool !== ''),
        String(v),
      );
      assert.equal(/is not "true" or "false"/.test(warnings(r).join('\n')), v === 'yes', String(v));
    }
  });
});
