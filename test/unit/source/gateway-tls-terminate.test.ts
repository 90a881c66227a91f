/**
 * TLS listeners in Terminate mode (GATEWAY-TLS extended, TLSRouteModeTerminate), modelled on the
 * upstream v1.6.1 tests TLSRouteTerminateSimpleSameNamespace, TLSRouteListenerTerminateSupportedKinds
 * and TLSRouteListenerMixedTerminationNotSupported. Where the load balancer terminates TLS
 * listeners, such a listener is accepted, lists TLSRoute, and its port becomes an L4 virtual
 * service carrying the listeners' certificates and the routes by SNI (members get the decrypted
 * stream); a port with listeners of both modes is refused whole (ProtocolConflict, no route kind);
 * where the load balancer serves Mixed mode, both listeners are accepted and share one virtual
 * service (TLSRouteMixedTerminationSameNamespace);
 * a certificate reference that does not resolve leaves nothing to terminate with (no virtual
 * service, never passed through); and where the load balancer does not terminate, the listener is
 * UnsupportedValue as before while a passthrough listener beside it on its own port is served.
 */
import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { gatewaySchema, l4RouteSchema } from '../../../src/kube/gateway-objects.ts';
import { poolName, tlsPoolName } from '../../../src/model/names.ts';
import { resolveConnection } from '../../../src/model/http-match.ts';
import type { L4VirtualService } from '../../../src/model/types.ts';
import { type TestCertificate, testCertificate } from '../../support/certs.ts';
import { backendTlsPolicySchema } from '../../../src/kube/backend-tls-objects.ts';
import { caConfigMapSchema } from '../../../src/kube/config-maps.ts';
import { ALL_HTTP } from '../../../src/adapter/http-capabilities.ts';
import type { BackendTls } from '../../../src/model/types.ts';
import { testAuthority } from '../../support/certs.ts';
import { INFRA, listenerConditions, pass } from './gateway-support.ts';
import { supportedFeatures } from '../../../src/source/gateway/features.ts';

let cert: TestCertificate;
let ca: string;
before(async () => {
  [cert, ca] = await Promise.all([
    testCertificate({ dns: ['tls.example.com'] }),
    testAuthority('backends').then((a) => a.cert),
  ]);
});

type Listener = Record<string, unknown>;
const terminate = (name: string, port: number, extra: Listener = {}): Listener => ({
  name,
  port,
  protocol: 'TLS',
  hostname: 'tls.example.com',
  allowedRoutes: { namespaces: { from: 'Same' }, kinds: [{ kind: 'TLSRoute' }] },
  tls: { mode: 'Terminate', certificateRefs: [{ name: 'tls-terminate-checks-certificate' }] },
  ...extra,
});
const gateway = (listeners: Listener[]) =>
  gatewaySchema.parse({
    metadata: { namespace: INFRA, name: 'gateway-tlsroute-terminate', generation: 1 },
    spec: { gatewayClassName: 'npl-lb', listeners },
  });
const route = (section: string) =>
  l4RouteSchema.parse({
    metadata: { namespace: INFRA, name: 'tlsroute-terminated-test', generation: 1 },
    spec: {
      parentRefs: [{ name: 'gateway-tlsroute-terminate', namespace: INFRA, sectionName: section }],
      hostnames: ['tls.example.com'],
      rules: [{ backendRefs: [{ name: 'tcp-backend', port: 3000 }] }],
    },
  });

function run(listeners: Listener[], o: { terminates?: boolean; secret?: boolean; section?: string } = {}) {
  const r = pass({
    gateways: [gateway(listeners)],
    support: { TLS: true, tlsTerminate: o.terminates ?? true },
    routes: [],
    secrets: o.secret === false ? [] : [{ namespace: INFRA, name: 'tls-terminate-checks-certificate', cert }],
    l4: { tlsRoutes: [route(o.section ?? 'tlsterminate')] },
  });
  const key = `${INFRA}/gateway-tlsroute-terminate`;
  return {
    r,
    listener: (name: string) => ({
      conditions: listenerConditions(r, key, name),
      status: r.gateways.get(key)!.listeners.find((l) => l.name === name)!,
    }),
    vs: (port: number) =>
      r.virtualServices.find((v): v is L4VirtualService => v.kind === 'l4' && v.port === port),
    route: (r.routes.get(`TLSRoute ${INFRA}/tlsroute-terminated-test`)?.parents ?? []).map((p) =>
      p.conditions.map((c) => `${c.type}=${c.status ? 'True' : 'False'}/${c.reason}`),
    ),
  };
}

describe('Gateway API: TLS listeners in Terminate mode', () => {
  it('accepted where the load balancer terminates: TLSRoute listed, the port terminates with the listener’s certificate and routes by SNI', () => {
    const t = run([terminate('tlsterminate', 8443)]);
    const l = t.listener('tlsterminate');
    assert.equal(l.conditions[0], 'Accepted=True/Accepted');
    assert.deepEqual(
      l.status.supportedKinds.map((k) => k.kind),
      ['TLSRoute'],
    );
    assert.equal(l.status.attachedRoutes, 1);
    assert.deepEqual(t.route, [['Accepted=True/Accepted', 'ResolvedRefs=True/ResolvedRefs']]);
    const vs = t.vs(8443)!;
    assert.deepEqual(vs.certificates, ['c1--gateway-conformance-infra.tls-terminate-checks-certificate']);
    assert.ok(
      t.r.certificates.some((c) => c.name === vs.certificates![0]),
      'the certificate is in the desired state',
    );
    // The decrypted stream goes to the Service's plain port, by the name asked in the handshake.
    assert.equal(
      resolveConnection(vs, 'tls.example.com'),
      poolName('c1', INFRA, 'tcp-backend', 'echo-tcp-plain'),
    );
    assert.equal(resolveConnection(vs, 'other.example.com'), undefined);
  });

  it('both modes on one port: neither listener is accepted (ProtocolConflict), no route kind, nothing served', () => {
    const t = run(
      [
        terminate('tls-terminate', 8443, { hostname: 'terminate.example.com' }),
        {
          name: 'tls-passthrough',
          port: 8443,
          protocol: 'TLS',
          hostname: 'passthrough.example.com',
          allowedRoutes: { namespaces: { from: 'Same' }, kinds: [{ kind: 'TLSRoute' }] },
          tls: { mode: 'Passthrough' },
        },
      ],
      { section: 'tls-terminate' },
    );
    for (const name of ['tls-terminate', 'tls-passthrough']) {
      const l = t.listener(name);
      assert.equal(l.conditions[0], 'Accepted=False/ProtocolConflict', name);
      assert.deepEqual(l.status.supportedKinds, [], name);
      assert.equal(l.status.attachedRoutes, 0, name);
    }
    assert.equal(t.vs(8443), undefined, 'neither terminated nor passed through');
  });

  it('a certificate that does not resolve: not programmed, nothing listens (never passed through as TLS)', () => {
    const t = run([terminate('tlsterminate', 8443)], { secret: false });
    const l = t.listener('tlsterminate');
    assert.ok(l.conditions.includes('ResolvedRefs=False/InvalidCertificateRef'), l.conditions.join());
    assert.ok(l.conditions.includes('Programmed=False/Invalid'), l.conditions.join());
    assert.equal(t.vs(8443), undefined);
    const none = run([terminate('tlsterminate', 8443, { tls: { mode: 'Terminate' } })]);
    assert.ok(
      none.listener('tlsterminate').conditions.includes('ResolvedRefs=False/InvalidCertificateRef'),
      'no certificateRefs at all',
    );
    assert.equal(none.vs(8443), undefined);
  });

  it('where the load balancer does not terminate: UnsupportedValue, no kind; a passthrough port beside it is still served', () => {
    const t = run(
      [
        terminate('tlsterminate', 8443),
        {
          name: 'tls-passthrough',
          port: 9443,
          protocol: 'TLS',
          allowedRoutes: { namespaces: { from: 'Same' } },
          tls: { mode: 'Passthrough' },
        },
      ],
      { terminates: false },
    );
    const l = t.listener('tlsterminate');
    assert.equal(l.conditions[0], 'Accepted=False/UnsupportedValue');
    assert.deepEqual(l.status.supportedKinds, []);
    assert.equal(t.vs(8443), undefined);
    assert.equal(t.listener('tls-passthrough').conditions[0], 'Accepted=True/Accepted');
    // On one port with a passthrough listener, the Terminate one alone is refused there.
    const shared = run(
      [
        terminate('tlsterminate', 8443),
        { name: 'pt', port: 8443, protocol: 'TLS', hostname: 'pt.example.com', tls: { mode: 'Passthrough' } },
      ],
      { terminates: false },
    );
    assert.equal(shared.listener('tlsterminate').conditions[0], 'Accepted=False/UnsupportedValue');
    assert.equal(shared.listener('pt').conditions[0], 'Accepted=True/Accepted');
  });
});

describe('Gateway API: TLS listeners of both modes on one port (Mixed), where the load balancer serves it', () => {
  const passthrough = (hostname: string): Listener => ({
    name: 'tls-passthrough',
    port: 8883,
    protocol: 'TLS',
    hostname,
    allowedRoutes: { namespaces: { from: 'Same' }, kinds: [{ kind: 'TLSRoute' }] },
    tls: { mode: 'Passthrough' },
  });
  const tlsRoute = (name: string, section: string, host: string, port: number) =>
    l4RouteSchema.parse({
      metadata: { namespace: INFRA, name, generation: 1 },
      spec: {
        parentRefs: [{ name: 'gateway-tlsroute-terminate', namespace: INFRA, sectionName: section }],
        hostnames: [host],
        rules: [{ backendRefs: [{ name: 'tcp-backend', port }] }],
      },
    });
  function mixed(listeners: Listener[], o: { secret?: boolean } = {}) {
    const r = pass({
      gateways: [gateway(listeners)],
      support: { TLS: true, tlsTerminate: true, tlsMixed: true },
      routes: [],
      secrets:
        o.secret === false ? [] : [{ namespace: INFRA, name: 'tls-terminate-checks-certificate', cert }],
      l4: {
        tlsRoutes: [
          tlsRoute('terminated', 'tls-terminate', 'tls.example.com', 3000),
          tlsRoute('through', 'tls-passthrough', 'abc.example.com', 8443),
        ],
      },
    });
    const key = `${INFRA}/gateway-tlsroute-terminate`;
    return {
      r,
      conditions: (name: string) => listenerConditions(r, key, name),
      vs: r.virtualServices.find((v): v is L4VirtualService => v.kind === 'l4' && v.port === 8883),
    };
  }
  const both = () => [terminate('tls-terminate', 8883), passthrough('abc.example.com')];

  it('both accepted; one virtual service terminating the Terminate names, the Passthrough ones marked to pass through', () => {
    const t = mixed(both());
    for (const name of ['tls-terminate', 'tls-passthrough'])
      assert.equal(t.conditions(name)[0], 'Accepted=True/Accepted', name);
    const vs = t.vs!;
    assert.deepEqual(vs.certificates, ['c1--gateway-conformance-infra.tls-terminate-checks-certificate']);
    assert.deepEqual(vs.sni!.map((r) => [r.host, r.passthrough ?? false]).sort(), [
      ['abc.example.com', true],
      ['tls.example.com', false],
    ]);
    // The terminated name to the plain port, the passed-through one to the TLS port.
    assert.equal(
      resolveConnection(vs, 'tls.example.com'),
      poolName('c1', INFRA, 'tcp-backend', 'echo-tcp-plain'),
    );
    assert.notEqual(resolveConnection(vs, 'abc.example.com'), resolveConnection(vs, 'tls.example.com'));
    assert.equal(resolveConnection(vs, 'other.example.com'), undefined);
  });

  it('the Terminate listener’s certificate gone: its names are not served, the Passthrough ones still are (no mark left)', () => {
    const t = mixed(both(), { secret: false });
    assert.ok(t.conditions('tls-terminate').includes('Programmed=False/Invalid'));
    const vs = t.vs!;
    assert.equal(vs.certificates, undefined, 'nothing terminates');
    assert.deepEqual(
      vs.sni!.map((r) => r.host),
      ['abc.example.com'],
    );
    assert.ok(vs.sni!.every((r) => r.passthrough === undefined));
  });

  it('the two modes with one hostname: HostnameConflict on both, nothing served twice', () => {
    const t = mixed([terminate('tls-terminate', 8883), passthrough('tls.example.com')]);
    for (const name of ['tls-terminate', 'tls-passthrough'])
      assert.ok(t.conditions(name).includes('Conflicted=True/HostnameConflict'), t.conditions(name).join());
  });

  it('the GATEWAY-TLS features claim TLSRouteModeMixed only where it is served', () => {
    const tls = { HTTP: false, HTTPS: false, TLS: true, TCP: true, UDP: false, tlsTerminate: true };
    assert.ok(supportedFeatures({ ...tls, tlsMixed: true }, ALL_HTTP).includes('TLSRouteModeMixed'));
    assert.ok(!supportedFeatures(tls, ALL_HTTP).includes('TLSRouteModeMixed'));
  });
});

describe('Gateway API: Terminate mode re-encrypting to a BackendTLSPolicy’s port', () => {
  const policy = backendTlsPolicySchema.parse({
    metadata: { namespace: INFRA, name: 'btls', generation: 1, creationTimestamp: '2026-01-01T00:00:00Z' },
    spec: {
      targetRefs: [{ group: '', kind: 'Service', name: 'tcp-backend' }],
      validation: {
        hostname: 'abc.example.com',
        caCertificateRefs: [{ group: '', kind: 'ConfigMap', name: 'ca' }],
      },
    },
  });
  const cm = () =>
    caConfigMapSchema.parse({
      metadata: { namespace: INFRA, name: 'ca', uid: 'u-ca', resourceVersion: '1' },
      data: { 'ca.crt': ca },
    });
  const tlsRoute = (section: string) =>
    l4RouteSchema.parse({
      metadata: { namespace: INFRA, name: 'to-tls', generation: 1 },
      spec: {
        parentRefs: [{ name: 'gateway-tlsroute-terminate', namespace: INFRA, sectionName: section }],
        hostnames: ['tls.example.com'],
        rules: [{ backendRefs: [{ name: 'tcp-backend', port: 8443 }] }],
      },
    });
  function run(listeners: Listener[], section: string, configMaps = [cm()]) {
    const tlsPools = new Map<string, BackendTls>();
    const r = pass({
      gateways: [gateway(listeners)],
      support: { TLS: true, tlsTerminate: true },
      http: { ...ALL_HTTP, backendTls: { systemCa: true, maxVerifyNames: 1, namesApartFromSni: false } },
      routes: [],
      secrets: [{ namespace: INFRA, name: 'tls-terminate-checks-certificate', cert }],
      backendTlsPolicies: [policy],
      configMaps,
      tlsPools,
      l4: { tlsRoutes: [tlsRoute(section)] },
    });
    const vs = r.virtualServices.find((v): v is L4VirtualService => v.kind === 'l4');
    const status = (r.routes.get(`TLSRoute ${INFRA}/to-tls`)?.parents ?? []).map((p) =>
      p.conditions.map((c) => `${c.type}=${c.status ? 'True' : 'False'}/${c.reason}`),
    );
    const ancestors = r.tlsPolicies?.get(`${INFRA}/btls`) ?? [];
    return { r, vs, status, tlsPools, ancestors };
  }

  it('the backend gets a tcp pool spoken to over TLS (the policy’s hostname as SNI and verified); the policy says so on the Gateway', () => {
    const t = run([terminate('tlsterminate', 8443)], 'tlsterminate');
    assert.deepEqual(t.status, [['Accepted=True/Accepted', 'ResolvedRefs=True/ResolvedRefs']]);
    const pool = resolveConnection(t.vs!, 'tls.example.com')!;
    assert.notEqual(pool, poolName('c1', INFRA, 'tcp-backend', 'echo-tcp-tls'), 'not the clear-text pool');
    assert.equal(t.tlsPools.get(pool)?.serverName, 'abc.example.com');
    assert.notEqual(
      pool,
      tlsPoolName('c1', { namespace: INFRA, name: 'tcp-backend' }, 'echo-tcp-tls', t.tlsPools.get(pool)!),
      'apart from an HTTP route’s TLS pool of the same port and TLS (tcp and http are different modes)',
    );
    assert.deepEqual(
      t.ancestors.map((a) => [a.ancestorRef.name, a.conditions.map((c) => `${c.type}=${c.status}`)]),
      [['gateway-tlsroute-terminate', ['Accepted=true', 'ResolvedRefs=true']]],
    );
  });

  it('a policy that cannot be used: ResolvedRefs False, UnsupportedProtocol, and nothing routed (never clear text)', () => {
    const t = run([terminate('tlsterminate', 8443)], 'tlsterminate', []);
    assert.deepEqual(t.status, [['Accepted=True/Accepted', 'ResolvedRefs=False/UnsupportedProtocol']]);
    assert.equal(resolveConnection(t.vs!, 'tls.example.com'), undefined, 'the connection is closed');
    assert.equal(t.tlsPools.size, 0);
  });

  it('a passthrough listener carries the client’s own TLS: the policy does not apply there', () => {
    const t = run(
      [
        {
          name: 'pt',
          port: 9443,
          protocol: 'TLS',
          hostname: 'tls.example.com',
          allowedRoutes: { namespaces: { from: 'Same' } },
          tls: { mode: 'Passthrough' },
        },
      ],
      'pt',
    );
    assert.equal(
      resolveConnection(t.vs!, 'tls.example.com'),
      poolName('c1', INFRA, 'tcp-backend', 'echo-tcp-tls'),
    );
    assert.equal(t.tlsPools.size, 0);
  });
});
