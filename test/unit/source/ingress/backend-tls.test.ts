/**
 * Issue 48, item 1 (Ingress): re-encryption by annotation, as AKO's HTTPRule `reencrypt` and CIS's
 * TLSProfile `reencrypt` offer. `npl-lb.io/backend-protocol: HTTPS` with a server name and a CA
 * (a ConfigMap's `ca.crt`, or System) gives every backend of the Ingress a pool spoken to over
 * TLS; every way it can be wrong (a bad value, a config-syntax server name, a CA that does not
 * resolve or parse, a load balancer without TLS to members, TLS annotations without HTTPS)
 * refuses that Ingress's rules alone, said on it: never clear text where TLS was asked. Across a
 * change: the CA rotated reaches the pool, the ConfigMap deleted takes the rules out.
 */
import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { HAPROXY_CAPABILITIES } from '../../../../adapters/haproxy/capabilities.ts';
import { parseControllerConfig } from '../../../../src/config/controller-config.ts';
import { caConfigMapSchema } from '../../../../src/kube/config-maps.ts';
import { ingressSchema } from '../../../../src/kube/objects.ts';
import type { L7VirtualService } from '../../../../src/model/types.ts';
import { buildDesired } from '../../../../src/source/desired.ts';
import { SERVE_ALL } from '../../../../src/source/gateway/from-view.ts';
import { testAuthority, type TestCertificate, caPem } from '../../../support/certs.ts';
import { clusterView, ingressBody, kubeIngressClass, kubeService } from '../../../support/kube-objects.ts';

const cfg = parseControllerConfig('clusterName: c1\nvip: {cidrs: [192.0.2.0/28]}');
const HAPROXY = { name: 'haproxy', caps: HAPROXY_CAPABILITIES };

let ca: TestCertificate;
let other: TestCertificate;
before(async () => {
  [ca, other] = await Promise.all([testAuthority('ingress ca'), testAuthority('other ca')]);
});

const ingress = (name: string, host: string, annotations: Record<string, string> = {}) => {
  const body = ingressBody(name, { className: 'npl', host, service: 'web', port: 80 });
  return ingressSchema.parse({ ...body, metadata: { ...body.metadata, annotations } });
};
const configMap = (name: string, data: Record<string, string>) =>
  caConfigMapSchema.parse({ metadata: { namespace: 'default', name, uid: `u-${name}` }, data });
const TLS = (ca = 'shop-ca', name = 'web.internal.example.com') => ({
  'npl-lb.io/backend-protocol': 'HTTPS',
  'npl-lb.io/backend-tls-server-name': name,
  'npl-lb.io/backend-tls-ca': ca,
});

function build(
  ings: ReturnType<typeof ingress>[],
  cms: ReturnType<typeof configMap>[] = [],
  lb: Parameters<typeof buildDesired>[2] = HAPROXY,
) {
  const r = buildDesired(
    clusterView({
      services: [kubeService('web', { ports: [{ name: 'http', port: 80, targetPort: 8080 }] })],
      ingressClasses: [kubeIngressClass('npl')],
      ingresses: ings,
      configMaps: cms,
    }),
    cfg,
    lb,
  );
  const vs = r.state.virtualServices[0] as L7VirtualService | undefined;
  const byHost = new Map((vs?.routes ?? []).map((x) => [x.host, x.pool]));
  const pool = (host: string) => r.state.pools.find((p) => p.name === byHost.get(host));
  return { r, byHost, pool, finding: r.findings.find((f) => f.reason === 'InvalidBackendTLS') };
}

describe('Ingress re-encryption (npl-lb.io/backend-protocol: HTTPS)', () => {
  it('every backend of the Ingress gets a TLS pool of its own; another Ingress to the same Service stays clear text', () => {
    const t = build(
      [ingress('a', 'a.example', TLS()), ingress('b', 'b.example')],
      [configMap('shop-ca', { 'ca.crt': ca.cert })],
    );
    assert.equal(t.finding, undefined);
    assert.match(t.byHost.get('a.example') ?? '', /\.tls-[0-9a-f]{8}$/);
    assert.match(t.byHost.get('b.example') ?? '', /\.l7$/);
    assert.deepEqual(t.pool('a.example')?.backendTls, {
      serverName: 'web.internal.example.com',
      verifyNames: ['web.internal.example.com'],
      ca: caPem(ca.cert),
    });
    assert.equal(t.pool('b.example')?.backendTls, undefined);
    const sys = build([ingress('a', 'a.example', TLS('System'))]);
    assert.equal(sys.pool('a.example')?.backendTls?.ca, 'System');
    assert.equal(
      build([ingress('a', 'a.example', { 'npl-lb.io/backend-protocol': 'HTTP' })]).finding,
      undefined,
    );
  });

  const bad: [string, Record<string, string>, RegExp][] = [
    ['an unknown protocol', { 'npl-lb.io/backend-protocol': 'h2' }, /"h2" is not "HTTP" or "HTTPS"/],
    [
      'a server name without HTTPS',
      { 'npl-lb.io/backend-tls-server-name': 'a.example.com' },
      /backend-tls-server-name without npl-lb\.io\/backend-protocol: "HTTPS"/,
    ],
    [
      'no server name',
      { 'npl-lb.io/backend-protocol': 'HTTPS', 'npl-lb.io/backend-tls-ca': 'shop-ca' },
      /missing/,
    ],
    ['a server name with config syntax', TLS('shop-ca', 'a.example.com verify none'), /is not a DNS name/],
    [
      'no CA',
      { 'npl-lb.io/backend-protocol': 'HTTPS', 'npl-lb.io/backend-tls-server-name': 'a.example.com' },
      /backend-tls-ca: missing/,
    ],
    ['a missing ConfigMap', TLS('gone'), /ConfigMap "gone" not found/],
    ['a ConfigMap without ca.crt', TLS('no-key'), /has no key ca\.crt/],
    ['a CA that does not parse', TLS('garbage'), /no PEM certificate/],
    ['a megabyte of CA', TLS('huge'), /over the 262144 allowed/],
  ];
  for (const [what, annotations, said] of bad)
    it(`${what}: that Ingress's rules are not served, said; another Ingress still is`, () => {
      const t = build(
        [ingress('a', 'a.example', annotations), ingress('b', 'b.example')],
        [
          configMap('shop-ca', { 'ca.crt': ca.cert }),
          configMap('no-key', { 'tls.crt': ca.cert }),
          configMap('garbage', { 'ca.crt': 'not a certificate' }),
          configMap('huge', { 'ca.crt': `${ca.cert}\n`.repeat(Math.ceil(1_048_576 / ca.cert.length)) }),
        ],
      );
      assert.equal(t.byHost.has('a.example'), false, 'never in clear text');
      assert.equal(t.byHost.has('b.example'), true);
      assert.equal(t.finding?.key, 'default/a');
      assert.match(t.finding?.message ?? '', said);
      assert.match(t.finding?.message ?? '', /its rules are not served until it is fixed/);
    });

  it('two Ingresses asking the same Service other names or CAs get a pool each: one asker’s TLS is never another’s', () => {
    const t = build(
      [
        ingress('a', 'a.example', TLS('shop-ca', 'one.internal.example.com')),
        ingress('b', 'b.example', TLS('shop-ca', 'two.internal.example.com')),
        ingress('c', 'c.example', TLS('other-ca', 'one.internal.example.com')),
      ],
      [configMap('shop-ca', { 'ca.crt': ca.cert }), configMap('other-ca', { 'ca.crt': other.cert })],
    );
    const pools = ['a.example', 'b.example', 'c.example'].map((h) => t.byHost.get(h));
    assert.equal(new Set(pools).size, 3, pools.join(', '));
    assert.equal(t.pool('b.example')?.backendTls?.serverName, 'two.internal.example.com');
    assert.equal(t.pool('c.example')?.backendTls?.ca, caPem(other.cert));
  });

  it('a load balancer that speaks no TLS to members refuses it by name', () => {
    const t = build(
      [ingress('a', 'a.example', TLS())],
      [configMap('shop-ca', { 'ca.crt': ca.cert })],
      SERVE_ALL,
    );
    assert.equal(t.byHost.has('a.example'), false);
    assert.match(t.finding?.message ?? '', /the memory load balancer does not speak TLS to backends/);
  });

  it('across a change: the CA rotated reaches the pool; the ConfigMap deleted takes the rules out', () => {
    const first = build([ingress('a', 'a.example', TLS())], [configMap('shop-ca', { 'ca.crt': ca.cert })]);
    const both = build(
      [ingress('a', 'a.example', TLS())],
      [configMap('shop-ca', { 'ca.crt': `${ca.cert}${other.cert}` })],
    );
    // Another CA is another pool (its name hashes what was asked): the routes move to it.
    assert.notEqual(first.byHost.get('a.example'), both.byHost.get('a.example'));
    assert.equal(both.pool('a.example')?.backendTls?.ca, caPem(`${ca.cert}${other.cert}`));
    const gone = build([ingress('a', 'a.example', TLS())], []);
    assert.equal(gone.byHost.has('a.example'), false);
    assert.match(gone.finding?.message ?? '', /not found/);
  });
});
