/**
 * Issue 48, item 0: nothing security-bearing is ignored. Every leaf of the bundled v1.6.1 Gateway
 * schema is listed with what npl-lb does with it (a field added upstream fails the first test);
 * those a device cannot serve refuse the listener they concern by name (Accepted=False,
 * UnsupportedValue, Programmed=False) rather than serve it without them: client certificate
 * validation (`spec.tls.frontend`, the default or one port's), a certificate to present to
 * backends (`spec.tls.backend`), implementation-specific TLS options. A load balancer that
 * declares the capability takes the field.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { gatewaySchema } from '../../../src/kube/gateway-objects.ts';
import { INFRA, listenerConditions, pass } from './gateway-support.ts';
import { schemaLeaves } from './schema-leaves.ts';

/** What npl-lb does with each field of a Gateway (by path prefix), checked here or where named. */
const GATEWAY_FIELDS: Record<string, string> = {
  'spec.gatewayClassName': 'served: the class decides the controller (gateway-class tests)',
  'spec.addresses[]': 'served: static and empty addresses (gateway-addresses tests)',
  'spec.allowedListeners':
    'served: which namespaces’ ListenerSets attach, None by default (gateway-listener-sets tests)',
  'spec.infrastructure.annotations': 'accepted: npl-lb makes no infrastructure objects to carry them',
  'spec.infrastructure.labels': 'accepted: npl-lb makes no infrastructure objects to carry them',
  'spec.infrastructure.parametersRef': 'served: LoadBalancerParameters (class-parameters tests)',
  'spec.listeners[].name': 'served: listener status by name',
  'spec.listeners[].port': 'served',
  'spec.listeners[].protocol': 'served, or refused as UnsupportedProtocol (gateway-attach tests)',
  'spec.listeners[].hostname': 'served: attachment and isolation (gateway-http tests)',
  'spec.listeners[].allowedRoutes': 'served: kinds and namespaces (gateway-attach tests)',
  'spec.listeners[].tls.certificateRefs[]':
    'served: certificates, or ResolvedRefs=False (gateway-http tests)',
  'spec.listeners[].tls.mode': 'served: Passthrough; Terminate on TLS listeners refused (gateway-l4 tests)',
  'spec.listeners[].tls.options': 'refused: UnsupportedValue naming the options (below)',
  'spec.tls.frontend':
    'served where the device validates client certificates (gateway-client-certificates tests), else refused on the HTTPS listeners it concerns (below)',
  'spec.tls.backend':
    'served where the device presents client certificates to backends (gateway-backend-client-certificate tests), else refused on every listener (below)',
};

function gateway(tls?: Record<string, unknown>, httpsTls: Record<string, unknown> = {}) {
  return gatewaySchema.parse({
    metadata: { namespace: INFRA, name: 'tls-gw', generation: 1, creationTimestamp: '2026-01-01T00:00:00Z' },
    spec: {
      gatewayClassName: 'npl-lb',
      listeners: [
        { name: 'http', port: 80, protocol: 'HTTP' },
        {
          name: 'https',
          port: 443,
          protocol: 'HTTPS',
          tls: { certificateRefs: [{ group: '', kind: 'Secret', name: 'cert' }], ...httpsTls },
        },
      ],
      ...(tls ? { tls } : {}),
    },
  });
}

const accepted = (tls?: Record<string, unknown>, httpsTls?: Record<string, unknown>, support = {}) => {
  const r = pass({ gateways: [gateway(tls, httpsTls)], support });
  const of = (l: string) => listenerConditions(r, `${INFRA}/tls-gw`, l);
  const l = r.gateways.get(`${INFRA}/tls-gw`)?.listeners.find((x) => x.name === 'https');
  return {
    http: of('http'),
    https: of('https'),
    message: l?.conditions.find((c) => c.type === 'Accepted')?.message ?? '',
  };
};
const validation = {
  caCertificateRefs: [{ group: '', kind: 'ConfigMap', name: 'ca' }],
  mode: 'AllowValidOnly',
};

describe('Gateway fields: served, accepted or refused, never ignored', () => {
  it('every leaf of the v1.6.1 Gateway schema says what npl-lb does with it', () => {
    const leaves = schemaLeaves('Gateway');
    assert.ok(leaves.length > 40, `${leaves.length} leaves`);
    const said = (leaf: string) =>
      Object.keys(GATEWAY_FIELDS).some(
        (p) => leaf === p || leaf.startsWith(`${p}.`) || leaf.startsWith(`${p}[`),
      );
    assert.deepEqual(
      leaves.filter((l) => !said(l)),
      [],
      'fields nobody said what npl-lb does with',
    );
    assert.deepEqual(
      Object.keys(GATEWAY_FIELDS).filter((p) => !leaves.some((l) => l === p || l.startsWith(p))),
      [],
      'entries naming fields the schema lacks',
    );
  });

  it('spec.tls.frontend: the HTTPS listener it concerns is refused by name, the rest served', () => {
    assert.ok(accepted().https.includes('Accepted=True/Accepted'));
    const byDefault = accepted({ frontend: { default: { validation } } });
    assert.ok(byDefault.https.includes('Accepted=False/UnsupportedValue'), byDefault.https.join());
    assert.ok(byDefault.https.includes('Programmed=False/Invalid'));
    assert.match(
      byDefault.message,
      /^spec\.tls\.frontend\.default\.validation: .* does not validate client certificates/,
    );
    assert.ok(byDefault.http.includes('Accepted=True/Accepted'), 'a plain HTTP listener asks no certificate');
    const perPort = accepted({
      frontend: {
        perPort: [
          { port: 8443, tls: { validation } },
          { port: 443, tls: { validation } },
        ],
      },
    });
    assert.match(perPort.message, /^spec\.tls\.frontend\.perPort\[1\]\.tls\.validation/);
    const otherPort = accepted({ frontend: { perPort: [{ port: 8443, tls: { validation } }] } });
    assert.ok(
      otherPort.https.includes('Accepted=True/Accepted'),
      'another port’s validation does not concern it',
    );
    // A device that validates takes it (and judges its references: this CA does not exist, so the
    // listener is not served unchecked; gateway-client-certificates.test.ts).
    const able = accepted({ frontend: { default: { validation } } }, {}, { clientCertificates: true });
    assert.ok(able.https.includes('Accepted=False/NoValidCACertificate'), able.https.join());
  });

  it('spec.tls.backend.clientCertificateRef refuses every listener; tls.options refuses its listener', () => {
    const backend = accepted({
      backend: { clientCertificateRef: { group: '', kind: 'Secret', name: 'client' } },
    });
    assert.ok(backend.https.includes('Accepted=False/UnsupportedValue'));
    assert.ok(backend.http.includes('Accepted=False/UnsupportedValue'));
    assert.match(backend.message, /^spec\.tls\.backend\.clientCertificateRef: /);
    const options = accepted(undefined, { options: { 'example.com/min-tls': '1.3' } });
    assert.ok(options.https.includes('Accepted=False/UnsupportedValue'));
    assert.match(options.message, /tls\.options "example\.com\/min-tls": npl-lb reads no TLS options/);
    // Hostile input stays data: a huge option name is cut in the message.
    const long = accepted(undefined, { options: { ['x'.repeat(10_000)]: 'y' } });
    assert.ok(long.message.length < 300);
  });
});
