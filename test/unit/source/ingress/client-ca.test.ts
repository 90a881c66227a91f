/**
 * Issue 48, item 2 (Ingress): client certificates asked for an Ingress's hosts by annotation
 * (`npl-lb.io/client-ca: <ConfigMap>`), as AKO's per-FQDN application profiles offer. The class's
 * shared HTTPS virtual service asks them for those hosts alone (hostClientValidation), names every
 * host it serves (listenerHosts, so a Host another than the handshake's server name is 421) and
 * never serves those hosts in clear text (their plain-HTTP twins redirect). Every way it can be
 * wrong (a ConfigMap missing, without ca.crt, not PEM, a megabyte of it, a name with config
 * syntax, a load balancer that cannot ask per host, a host without a certificate, another CA on
 * the same host) refuses those rules alone, said on the Ingress; the Ingress beside is served.
 * Across a change: the CA rotated reaches the service, the ConfigMap deleted takes the rules out.
 */
import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { aviCapabilities } from '../../../../adapters/avi/capabilities.ts';
import { F5_CAPABILITIES } from '../../../../adapters/f5/capabilities.ts';
import { DATAPLANE_CAPABILITIES, HAPROXY_CAPABILITIES } from '../../../../adapters/haproxy/capabilities.ts';
import { parseControllerConfig } from '../../../../src/config/controller-config.ts';
import { caConfigMapSchema } from '../../../../src/kube/config-maps.ts';
import {
  ingressClassSchema,
  ingressSchema,
  nodeSchema,
  serviceSchema,
  tlsSecretSchema,
} from '../../../../src/kube/objects.ts';
import type { L7VirtualService } from '../../../../src/model/types.ts';
import { buildDesired, type ClusterView } from '../../../../src/source/desired.ts';
import {
  testAuthority,
  type TestCertificate,
  testCertificate,
  tlsSecret,
  caPem,
} from '../../../support/certs.ts';

const cfg = parseControllerConfig('clusterName: c1\nvip: {cidrs: [192.0.2.0/28]}\n');
const HAPROXY = { name: 'haproxy', caps: HAPROXY_CAPABILITIES };
const HTTPS = 'c1--ingress-npl_https';
const HTTP = 'c1--ingress-npl';

const secret = (name: string, c: TestCertificate) => {
  const raw = tlsSecret('shop', name, c) as { metadata: Record<string, unknown> };
  raw.metadata.resourceVersion = '1';
  raw.metadata.uid = `uid-${name}`;
  return tlsSecretSchema.parse(raw);
};
const rule = (host: string) => ({
  host,
  http: {
    paths: [{ path: '/', pathType: 'Prefix', backend: { service: { name: 'web', port: { number: 80 } } } }],
  },
});
const ingress = (
  name: string,
  hosts: string[],
  tls: { hosts?: string[]; secretName?: string }[],
  annotations: Record<string, string> = {},
  extra: Record<string, unknown> = {},
) =>
  ingressSchema.parse({
    metadata: { name, namespace: 'shop', resourceVersion: '1', annotations },
    spec: { ingressClassName: 'npl', rules: hosts.map(rule), tls, ...extra },
  });
const configMap = (name: string, data: Record<string, string>) =>
  caConfigMapSchema.parse({ metadata: { namespace: 'shop', name, uid: `u-${name}` }, data });
const view = (v: Partial<ClusterView>): ClusterView => ({
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
const served = (vs: L7VirtualService | undefined) =>
  (vs?.routes ?? []).map((x) => `${x.host} ${x.redirect ? 'redirect' : 'pool'}`).sort();
const said = (r: ReturnType<typeof buildDesired>) =>
  r.findings.filter((f) => f.reason === 'InvalidClientCA').map((f) => `${f.key}: ${f.message}`);

let ca: TestCertificate;
let other: TestCertificate;
let a: TestCertificate;
let b: TestCertificate;
before(async () => {
  [ca, other, a, b] = await Promise.all([
    testAuthority('client ca'),
    testAuthority('other client ca'),
    testCertificate({ dns: ['a.example.com'] }),
    testCertificate({ dns: ['b.example.com'] }),
  ]);
});

const ASK = { 'npl-lb.io/client-ca': 'clients' };
const build = (
  ings: ReturnType<typeof ingress>[],
  cms = [configMap('clients', { 'ca.crt': ca.cert })],
  lb: Parameters<typeof buildDesired>[2] = HAPROXY,
) =>
  buildDesired(
    view({ ingresses: ings, secrets: [secret('a-tls', a), secret('b-tls', b)], configMaps: cms }),
    cfg,
    lb,
  );

describe('Ingress client certificates (npl-lb.io/client-ca)', () => {
  it('its hosts ask them on HTTPS and redirect on HTTP; every host is listed for 421; the Ingress beside is untouched', () => {
    const r = build([
      ingress('secure', ['a.example.com'], [{ hosts: ['a.example.com'], secretName: 'a-tls' }], ASK),
      ingress('open', ['b.example.com'], [{ hosts: ['b.example.com'], secretName: 'b-tls' }]),
    ]);
    const https = l7(r, HTTPS);
    assert.deepEqual(https?.hostClientValidation, [
      { host: 'a.example.com', certificate: 'c1--shop.a-tls', ca: caPem(ca.cert) },
    ]);
    assert.deepEqual(https?.listenerHosts, ['', 'a.example.com', 'b.example.com']);
    assert.equal(https?.clientValidation, undefined, 'never the whole service');
    assert.deepEqual(served(https), ['a.example.com pool', 'b.example.com pool']);
    assert.deepEqual(served(l7(r, HTTP)), ['a.example.com redirect', 'b.example.com pool']);
    assert.deepEqual(said(r), []);
  });

  it('refuses each bad annotation for that Ingress alone, said on it, never served in clear text', () => {
    const big = `${ca.cert}\n${'#'.repeat(1024 * 1024)}`;
    const cases: [string, Record<string, string>, ReturnType<typeof configMap>[], RegExp][] = [
      ['missing ConfigMap', ASK, [], /ConfigMap "clients" not found/],
      ['no ca.crt', ASK, [configMap('clients', { 'tls.crt': ca.cert })], /has no key ca\.crt/],
      ['not PEM', ASK, [configMap('clients', { 'ca.crt': 'not a certificate' })], /no PEM certificate/],
      [
        'a bad PEM block',
        ASK,
        [
          configMap('clients', {
            'ca.crt': '-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n',
          }),
        ],
        /does not parse/,
      ],
      ['a megabyte', ASK, [configMap('clients', { 'ca.crt': big })], /bytes, over the/],
      [
        'config syntax in the name',
        { 'npl-lb.io/client-ca': 'clients] verify none\n' },
        [configMap('clients', { 'ca.crt': ca.cert })],
        /is not a ConfigMap's name/,
      ],
    ];
    for (const [what, annotations, cms, why] of cases) {
      const r = build(
        [
          ingress(
            'secure',
            ['a.example.com'],
            [{ hosts: ['a.example.com'], secretName: 'a-tls' }],
            annotations,
          ),
          ingress('open', ['b.example.com'], [{ hosts: ['b.example.com'], secretName: 'b-tls' }]),
        ],
        cms,
      );
      assert.equal(said(r).length, 1, what);
      assert.match(said(r)[0]!, why, what);
      assert.match(said(r)[0]!, /^shop\/secure: .*never to clients without a certificate/, what);
      assert.deepEqual(served(l7(r, HTTP)), ['b.example.com pool'], what);
      assert.deepEqual(served(l7(r, HTTPS)), ['b.example.com pool'], what);
      assert.equal(l7(r, HTTPS)?.hostClientValidation, undefined, what);
    }
  });

  it('a load balancer that cannot ask per host (Avi, BIG-IP) serves none of its rules, and says why; both HAProxy transports can', () => {
    assert.equal(DATAPLANE_CAPABILITIES.http?.clientValidationByHost, true);
    for (const lb of [
      { name: 'avi', caps: aviCapabilities(false) },
      { name: 'f5', caps: F5_CAPABILITIES },
    ]) {
      const r = build(
        [ingress('secure', ['a.example.com'], [{ hosts: ['a.example.com'], secretName: 'a-tls' }], ASK)],
        undefined,
        lb,
      );
      assert.deepEqual(r.state.virtualServices, [], lb.name);
      assert.match(said(r)[0] ?? '', /does not ask client certificates for some hosts alone/, lb.name);
    }
  });

  it('a rule without a certificate, or without a host, and the default backend are not served; the rest is', () => {
    const r = build([
      ingress(
        'secure',
        ['a.example.com', 'plain.example.com', ''],
        [{ hosts: ['a.example.com'], secretName: 'a-tls' }],
        ASK,
        { defaultBackend: { service: { name: 'web', port: { number: 80 } } } },
      ),
    ]);
    assert.deepEqual(served(l7(r, HTTPS)), ['a.example.com pool']);
    assert.deepEqual(served(l7(r, HTTP)), ['a.example.com redirect']);
    assert.equal(l7(r, HTTP)?.defaultPool, undefined);
    const text = said(r).join('\n');
    assert.match(text, /no certificate in tls: for plain\.example\.com/);
    assert.match(text, /a rule without a host cannot ask by TLS server name/);
    assert.match(text, /spec\.defaultBackend is not served/);
  });

  it('one CA per class: the first Ingress by name gives it; another asking another CA (any host) is refused', () => {
    const cms = [configMap('clients', { 'ca.crt': ca.cert }), configMap('others', { 'ca.crt': other.cert })];
    const r = build(
      [
        ingress('a-first', ['a.example.com'], [{ hosts: ['a.example.com'], secretName: 'a-tls' }], ASK),
        ingress('b-second', ['b.example.com'], [{ hosts: ['b.example.com'], secretName: 'b-tls' }], {
          'npl-lb.io/client-ca': 'others',
        }),
      ],
      cms,
    );
    assert.deepEqual(
      l7(r, HTTPS)?.hostClientValidation?.map((h) => [h.host, h.ca]),
      [['a.example.com', caPem(ca.cert)]],
    );
    assert.deepEqual(served(l7(r, HTTPS)), ['a.example.com pool']);
    assert.match(
      said(r).join('\n'),
      /shop\/b-second: .*the class asks another CA \(Ingress shop\/a-first\): one CA per IngressClass/,
    );
    // The same CA on both, on one host or two: both served.
    const tls = [{ hosts: ['a.example.com'], secretName: 'a-tls' }];
    const same = build(
      [ingress('a-first', ['a.example.com'], tls, ASK), ingress('b-second', ['a.example.com'], tls, ASK)],
      cms,
    );
    assert.deepEqual(said(same), []);
    assert.equal(l7(same, HTTPS)?.routes.length, 2);
  });

  it('an Ingress asking nothing on a host another asks for is served there to verified clients only, and told', () => {
    const r = build([
      ingress('a-secure', ['a.example.com'], [{ hosts: ['a.example.com'], secretName: 'a-tls' }], ASK),
      ingress('b-open', ['a.example.com'], []),
    ]);
    assert.deepEqual(served(l7(r, HTTP)), ['a.example.com redirect', 'a.example.com redirect']);
    assert.match(said(r).join('\n'), /shop\/b-open: a\.example\.com: client certificates are asked there/);
  });

  it('across a change: the CA rotated reaches the service; the ConfigMap deleted takes the rules out', () => {
    const ings = [
      ingress('secure', ['a.example.com'], [{ hosts: ['a.example.com'], secretName: 'a-tls' }], ASK),
    ];
    const before = build(ings);
    const rotated = build(ings, [configMap('clients', { 'ca.crt': `${ca.cert}${other.cert}` })]);
    assert.deepEqual(l7(rotated, HTTPS)?.hostClientValidation?.[0]?.ca, caPem(`${ca.cert}${other.cert}`));
    assert.notDeepEqual(l7(before, HTTPS)?.hostClientValidation, l7(rotated, HTTPS)?.hostClientValidation);
    const gone = build(ings, []);
    assert.deepEqual(gone.state.virtualServices, []);
    assert.match(said(gone)[0] ?? '', /not found/);
  });
});
