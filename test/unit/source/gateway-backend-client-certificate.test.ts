/**
 * Issue 48, item 3: a Gateway's `spec.tls.backend.clientCertificateRef`, the certificate the load
 * balancer presents to members it speaks TLS to. Resolved as the spec orders (a core Secret of type
 * kubernetes.io/tls, another namespace's through a ReferenceGrant to the Gateway), said on the
 * Gateway's ResolvedRefs condition (InvalidClientCertificateRef, RefNotPermitted) while the Gateway
 * stays accepted; a TLS pool presenting it is a pool of its own (a route on two Gateways reaches
 * the same Service through two pools); a device that cannot present one refuses the listeners by
 * name. Across a change: the Secret rotated reaches the certificate, the reference removed takes
 * the certificate off the pool.
 */
import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import type { HttpCapabilities } from '../../../src/adapter/contract.ts';
import { ALL_HTTP } from '../../../src/adapter/http-capabilities.ts';
import { backendTlsPolicySchema } from '../../../src/kube/backend-tls-objects.ts';
import { caConfigMapSchema } from '../../../src/kube/config-maps.ts';
import { gatewaySchema } from '../../../src/kube/gateway-objects.ts';
import { certificateName } from '../../../src/model/names.ts';
import type { BackendTls } from '../../../src/model/types.ts';
import { testAuthority, testCertificate, type TestCertificate } from '../../support/certs.ts';
import { APP, grant, INFRA, listenerConditions, pass, route, type World } from './gateway-support.ts';

const ABLE: HttpCapabilities = {
  ...ALL_HTTP,
  backendTls: { systemCa: true, maxVerifyNames: 1, namesApartFromSni: true, clientCertificates: true },
};
const SUPPORT = { HTTPS: true, backendClientCertificates: true };

let ca: TestCertificate;
let client: TestCertificate;
let rotated: TestCertificate;
before(async () => {
  [ca, client, rotated] = await Promise.all([
    testAuthority('backend ca'),
    testCertificate({ dns: ['gateway.example.com'] }),
    testCertificate({ dns: ['gateway.example.com'] }),
  ]);
});

function gateway(name: string, ref?: Record<string, unknown>) {
  return gatewaySchema.parse({
    metadata: { namespace: INFRA, name, generation: 1, creationTimestamp: '2026-01-01T00:00:00Z' },
    spec: {
      gatewayClassName: 'npl-lb',
      listeners: [
        { name: 'http', port: 80, protocol: 'HTTP', allowedRoutes: { namespaces: { from: 'All' } } },
      ],
      ...(ref ? { tls: { backend: { clientCertificateRef: ref } } } : {}),
    },
  });
}

const policy = backendTlsPolicySchema.parse({
  metadata: { namespace: INFRA, name: 'tls', generation: 1, creationTimestamp: '2026-01-01T00:00:00Z' },
  spec: {
    targetRefs: [{ group: '', kind: 'Service', name: 'infra-backend-v1' }],
    validation: {
      hostname: 'backend.example.com',
      caCertificateRefs: [{ group: '', kind: 'ConfigMap', name: 'ca' }],
    },
  },
});

function run(
  gateways: ReturnType<typeof gateway>[],
  w: Partial<World> = {},
  parentRefs: Record<string, unknown>[] = gateways.map((g) => ({ name: g.metadata.name, namespace: INFRA })),
) {
  const tlsPools = new Map<string, BackendTls>();
  const r = pass({
    gateways,
    routes: [
      route(INFRA, 'to-tls', {
        parentRefs,
        rules: [{ backendRefs: [{ name: 'infra-backend-v1', port: 8080 }] }],
      }),
    ],
    backendTlsPolicies: [policy],
    configMaps: [
      caConfigMapSchema.parse({ metadata: { namespace: INFRA, name: 'ca' }, data: { 'ca.crt': ca.cert } }),
    ],
    http: ABLE,
    support: SUPPORT,
    tlsPools,
    secrets: [{ namespace: INFRA, name: 'client', cert: client }],
    ...w,
  });
  const gw = (name: string) => r.gateways.get(`${INFRA}/${name}`)!;
  const resolvedRefs = (name: string) =>
    gw(name)
      .conditions.filter((c) => c.type === 'ResolvedRefs' || c.type === 'Accepted')
      .map((c) => `${c.type}=${c.status ? 'True' : 'False'}/${c.reason}`);
  return { r, tlsPools, resolvedRefs };
}

const ref = (extra: Record<string, unknown> = {}) => ({
  group: '',
  kind: 'Secret',
  name: 'client',
  ...extra,
});
const NAME = certificateName('c1', INFRA, 'client');

describe('a Gateway’s backend client certificate', () => {
  it('resolved: ResolvedRefs True, the certificate in the result, the TLS pool presents it and is its own', () => {
    const { r, tlsPools, resolvedRefs } = run([gateway('with', ref()), gateway('without')]);
    assert.deepEqual(resolvedRefs('with'), ['Accepted=True/Accepted', 'ResolvedRefs=True/ResolvedRefs']);
    assert.deepEqual(resolvedRefs('without'), ['Accepted=True/Accepted'], 'no field, no condition');
    assert.deepEqual(
      r.certificates.map((c) => [c.name, c.certPem.trim() === client.cert.trim()]),
      [[NAME, true]],
    );
    const pools = [...tlsPools.entries()];
    assert.equal(pools.length, 2, 'one TLS pool per certificate presented');
    assert.deepEqual(pools.map(([, t]) => t.clientCertificate ?? '').sort(), ['', NAME]);
    assert.notEqual(pools[0]![0], pools[1]![0]);
  });

  it('a parent that does not take the route asks no pool of its certificate', () => {
    const { tlsPools } = run([gateway('with', ref()), gateway('without')], {}, [
      { name: 'with', namespace: INFRA, sectionName: 'nope' },
      { name: 'without', namespace: INFRA },
    ]);
    assert.deepEqual(
      [...tlsPools.values()].map((t) => t.clientCertificate ?? ''),
      [''],
      'only the plain TLS pool of the Gateway that takes it',
    );
  });

  it('every way the reference is wrong: ResolvedRefs False with the spec’s reason, the Gateway accepted, nothing presented', async () => {
    const malformed = {
      ...client,
      cert: '-----BEGIN CERTIFICATE-----\nnot base64\n-----END CERTIFICATE-----\n',
    };
    const cases: [Record<string, unknown>, string, Partial<World>?][] = [
      [ref({ name: 'missing' }), 'InvalidClientCertificateRef'],
      [ref({ group: 'example.com' }), 'InvalidClientCertificateRef'],
      [ref({ kind: 'ConfigMap' }), 'InvalidClientCertificateRef'],
      [
        ref({ name: 'bad' }),
        'InvalidClientCertificateRef',
        { secrets: [{ namespace: INFRA, name: 'bad', cert: malformed }] },
      ],
      [
        ref({ namespace: APP }),
        'RefNotPermitted',
        { secrets: [{ namespace: APP, name: 'client', cert: client }] },
      ],
    ];
    for (const [r0, reason, w] of cases) {
      const { r, tlsPools, resolvedRefs } = run([gateway('gw', r0)], w);
      assert.deepEqual(
        resolvedRefs('gw'),
        ['Accepted=True/Accepted', `ResolvedRefs=False/${reason}`],
        JSON.stringify(r0),
      );
      assert.ok(![...tlsPools.values()].some((t) => t.clientCertificate), 'no pool presents anything');
      assert.ok(!r.certificates.some((c) => c.name.includes('client')));
      const message = r.gateways
        .get(`${INFRA}/gw`)!
        .conditions.find((c) => c.type === 'ResolvedRefs')!.message;
      assert.match(message, /^spec\.tls\.backend\.clientCertificateRef: /);
      assert.ok(message.length < 300, 'a hostile group or kind is cut');
    }
    // A grant to the Gateway kind fixes the cross-namespace one.
    const granted = run([gateway('gw', ref({ namespace: APP }))], {
      secrets: [{ namespace: APP, name: 'client', cert: client }],
      grants: [grant(APP, 'Gateway', INFRA, 'Secret')],
    });
    assert.deepEqual(granted.resolvedRefs('gw'), [
      'Accepted=True/Accepted',
      'ResolvedRefs=True/ResolvedRefs',
    ]);
  });

  it('a device that cannot present one: every listener refused by name, never served without it', () => {
    const { r } = run([gateway('gw', ref())], {
      support: { HTTPS: true },
      http: { ...ABLE, backendTls: { ...ABLE.backendTls!, clientCertificates: false } },
    });
    const of = listenerConditions(r, `${INFRA}/gw`, 'http');
    assert.ok(of.includes('Accepted=False/UnsupportedValue'), of.join());
    assert.match(
      r.gateways.get(`${INFRA}/gw`)!.listeners[0]!.conditions[0]!.message,
      /^spec\.tls\.backend\.clientCertificateRef: .* does not present client certificates/,
    );
  });

  it('across a change: the Secret rotated reaches the certificate under the same name; the reference removed, the pool presents none', () => {
    const before = run([gateway('gw', ref())]);
    const after = run([gateway('gw', ref())], {
      secrets: [{ namespace: INFRA, name: 'client', cert: rotated }],
    });
    const certOf = (x: typeof before) => x.r.certificates.find((c) => c.name === NAME)?.certPem.trim();
    assert.equal(certOf(before), client.cert.trim());
    assert.equal(certOf(after), rotated.cert.trim());
    assert.deepEqual(
      [...before.tlsPools.keys()],
      [...after.tlsPools.keys()],
      'the pool stays: the file is replaced',
    );
    const removed = run([gateway('gw')]);
    assert.ok(![...removed.tlsPools.values()].some((t) => t.clientCertificate));
    assert.ok(!removed.r.certificates.some((c) => c.name === NAME));
  });
});
