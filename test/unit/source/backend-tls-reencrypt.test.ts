/**
 * Issue 48, item 1: BackendTLSPolicy on a load balancer that speaks TLS to backends. A valid
 * policy gives the route's backend a pool of its own spoken to over TLS (the hostname as SNI and
 * verified, the CA of its ConfigMap parsed and written again); every way a policy can be wrong
 * (a CA reference missing, of another kind, without `ca.crt`, not PEM, a megabyte long; a name
 * that is not a DNS name; a field the device cannot verify) keeps its backend's share at 500 and
 * says why in the policy's status with the spec's reasons, and two policies on one target follow
 * GEP-713 (the older applies, the newer is Conflicted). Across a change: a CA rotated reaches the
 * pool, a CA ConfigMap deleted takes the backend out (never clear text).
 */
import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import type { HttpCapabilities } from '../../../src/adapter/contract.ts';
import { ALL_HTTP } from '../../../src/adapter/http-capabilities.ts';
import { backendTlsPolicySchema } from '../../../src/kube/backend-tls-objects.ts';
import { caConfigMapSchema } from '../../../src/kube/config-maps.ts';
import type { BackendTls } from '../../../src/model/types.ts';
import { testAuthority, type TestCertificate, caPem } from '../../support/certs.ts';
import { backend, INFRA, parent, parentConditions, pass, route, vsOf } from './gateway-support.ts';

const ABLE: HttpCapabilities = {
  ...ALL_HTTP,
  backendTls: { systemCa: true, maxVerifyNames: 1, namesApartFromSni: true },
};

let ca: TestCertificate;
let other: TestCertificate;
before(async () => {
  [ca, other] = await Promise.all([testAuthority('ca one'), testAuthority('ca two')]);
});

const configMap = (name: string, data: Record<string, string>, namespace = INFRA) =>
  caConfigMapSchema.parse({
    metadata: { namespace, name, uid: `u-${name}`, resourceVersion: '1' },
    data,
  });

interface PolicyOptions {
  name?: string;
  created?: string;
  section?: string;
  hostname?: string;
  refs?: { group?: string; kind: string; name: string }[];
  wellKnown?: string;
  sans?: Record<string, string>[];
  options?: Record<string, string>;
}

const policy = (o: PolicyOptions = {}) =>
  backendTlsPolicySchema.parse({
    metadata: {
      namespace: INFRA,
      name: o.name ?? 'tls',
      generation: 1,
      creationTimestamp: o.created ?? '2026-01-01T00:00:00Z',
    },
    spec: {
      targetRefs: [
        {
          group: '',
          kind: 'Service',
          name: 'infra-backend-v1',
          ...(o.section ? { sectionName: o.section } : {}),
        },
      ],
      validation: {
        hostname: o.hostname ?? 'backend.example.com',
        ...(o.wellKnown !== undefined
          ? { wellKnownCACertificates: o.wellKnown }
          : { caCertificateRefs: o.refs ?? [{ group: '', kind: 'ConfigMap', name: 'ca' }] }),
        ...(o.sans ? { subjectAltNames: o.sans } : {}),
      },
      ...(o.options ? { options: o.options } : {}),
    },
  });

function run(
  policies: ReturnType<typeof policy>[],
  configMaps: ReturnType<typeof configMap>[],
  http: HttpCapabilities = ABLE,
) {
  const tlsPools = new Map<string, BackendTls>();
  const r = pass({
    routes: [
      route(INFRA, 'to-tls', {
        parentRefs: [parent('same-namespace')],
        rules: [{ backendRefs: [backend('infra-backend-v1', 8080)] }],
      }),
    ],
    backendTlsPolicies: policies,
    configMaps,
    http,
    tlsPools,
  });
  const routes = (vsOf(r, `${INFRA}/same-namespace`)?.routes ?? []).filter(
    (x) => x.source === `HTTPRoute ${INFRA}/to-tls`,
  );
  const resolved = r.routes
    .get(`HTTPRoute ${INFRA}/to-tls`)
    ?.parents[0]?.conditions.find((c) => c.type === 'ResolvedRefs');
  const statusOf = (name: string) =>
    r.tlsPolicies?.get(`${INFRA}/${name}`)?.[0]?.conditions.map((c) => `${c.type}=${c.status}/${c.reason}`) ??
    [];
  const messageOf = (name: string) =>
    r.tlsPolicies
      ?.get(`${INFRA}/${name}`)?.[0]
      ?.conditions.map((c) => c.message)
      .join(' | ') ?? '';
  return {
    routes,
    tlsPools,
    /** The one TLS pool asked for, and its TLS. */
    tlsPool: [...tlsPools.keys()][0],
    only: [...tlsPools.values()][0],
    route: parentConditions(r, `${INFRA}/to-tls`)[0] ?? [],
    routeMessage: resolved?.message ?? '',
    statusOf,
    messageOf,
  };
}

/** A TLS pool of the Service port (its name carries a hash of the TLS asked). */
const TLS_POOL = /^c1--gateway-conformance-infra-infra-backend-v1-.*[0-9a-f]{8}$/;

/** The route sends nowhere: its share answers 500 (never the clear-text pool). */
function assertRefused(t: ReturnType<typeof run>): void {
  assert.ok(t.route.includes('ResolvedRefs=False/UnsupportedProtocol'), t.route.join());
  assert.match(t.routeMessage, /never in clear text/);
  assert.ok(t.routes.length > 0);
  for (const x of t.routes) {
    assert.equal(x.pool, '');
    assert.deepEqual(x.backends, [{ pool: null, weight: 1 }]);
  }
  assert.equal(t.tlsPools.size, 0, 'no TLS pool asked for');
}

describe('BackendTLSPolicy re-encrypt: a valid policy', () => {
  it('gives the backend its TLS pool: the hostname as SNI and verified, the CA parsed and written again', () => {
    const t = run([policy()], [configMap('ca', { 'ca.crt': ca.cert, other: 'x'.repeat(10_000) })]);
    assert.ok(t.route.includes('ResolvedRefs=True/ResolvedRefs'), t.route.join());
    assert.equal(t.tlsPools.size, 1);
    assert.match(t.tlsPool ?? '', TLS_POOL);
    assert.ok(t.routes.length > 0 && t.routes.every((x) => x.pool === t.tlsPool), 'the TLS pool, never .l7');
    const tls = t.only;
    assert.equal(tls?.serverName, 'backend.example.com');
    assert.deepEqual(tls?.verifyNames, ['backend.example.com']);
    assert.equal(tls?.ca, caPem(ca.cert));
    assert.deepEqual(t.statusOf('tls'), ['Accepted=true/Accepted', 'ResolvedRefs=true/ResolvedRefs']);
  });

  it('text around the certificates never reaches the device: only the parsed certificates are kept', () => {
    const hostile = `# "quoted" } or { ca-file /etc/passwd\n${ca.cert}\nverify none\n`;
    const t = run([policy()], [configMap('ca', { 'ca.crt': hostile })]);
    const kept = t.only?.ca ?? '';
    assert.doesNotMatch(kept, /passwd|verify none|"/);
    assert.match(kept, /^-----BEGIN CERTIFICATE-----\n[\s\S]+-----END CERTIFICATE-----\n$/);
  });

  it('System CAs, a subjectAltName of type Hostname, and a policy naming the port beside one naming the Service', () => {
    const sys = run([policy({ wellKnown: 'System' })], []);
    assert.equal(sys.only?.ca, 'System');
    const san = run(
      [policy({ sans: [{ type: 'Hostname', hostname: 'san.example.com' }] })],
      [configMap('ca', { 'ca.crt': ca.cert })],
    );
    assert.deepEqual(san.only?.verifyNames, ['san.example.com']);
    assert.equal(san.only?.serverName, 'backend.example.com', 'the hostname is still the SNI');
    const both = run(
      [
        policy({ name: 'whole', hostname: 'whole.example.com' }),
        policy({
          name: 'port',
          hostname: 'port.example.com',
          section: 'first-port',
          created: '2026-03-01T00:00:00Z',
        }),
      ],
      [configMap('ca', { 'ca.crt': ca.cert })],
    );
    assert.equal(both.only?.serverName, 'port.example.com', 'the port’s policy wins on its port');
    assert.deepEqual(both.statusOf('port'), ['Accepted=true/Accepted', 'ResolvedRefs=true/ResolvedRefs']);
  });

  it('two policies on one target: the older applies, the newer is Conflicted (GEP-713)', () => {
    const t = run(
      [
        policy({ name: 'newer', hostname: 'newer.example.com', created: '2026-02-01T00:00:00Z' }),
        policy({ name: 'older', hostname: 'older.example.com', created: '2026-01-01T00:00:00Z' }),
      ],
      [configMap('ca', { 'ca.crt': ca.cert })],
    );
    assert.equal(t.only?.serverName, 'older.example.com');
    assert.deepEqual(t.statusOf('older'), ['Accepted=true/Accepted', 'ResolvedRefs=true/ResolvedRefs']);
    assert.deepEqual(t.statusOf('newer'), ['Accepted=false/Conflicted', 'ResolvedRefs=true/ResolvedRefs']);
    assert.ok(t.route.includes('ResolvedRefs=True/ResolvedRefs'));
  });
});

describe('BackendTLSPolicy re-encrypt: a policy that cannot be used keeps its share at 500 and says why', () => {
  const cases: {
    name: string;
    p: PolicyOptions;
    cms: () => ReturnType<typeof configMap>[];
    status: string[];
    said: RegExp;
  }[] = [
    {
      name: 'a missing ConfigMap',
      p: {},
      cms: () => [],
      status: ['Accepted=false/NoValidCACertificate', 'ResolvedRefs=false/InvalidCACertificateRef'],
      said: /ConfigMap ca not found/,
    },
    {
      name: 'a ConfigMap without ca.crt',
      p: {},
      cms: () => [configMap('ca', { 'tls.crt': ca.cert })],
      status: ['Accepted=false/NoValidCACertificate', 'ResolvedRefs=false/InvalidCACertificateRef'],
      said: /has no key ca\.crt/,
    },
    {
      name: 'a malformed certificate',
      p: {},
      cms: () => [
        configMap('ca', { 'ca.crt': '-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n' }),
      ],
      status: ['Accepted=false/NoValidCACertificate', 'ResolvedRefs=false/InvalidCACertificateRef'],
      said: /does not parse/,
    },
    {
      name: 'no PEM at all',
      p: {},
      cms: () => [configMap('ca', { 'ca.crt': 'hello' })],
      status: ['Accepted=false/NoValidCACertificate', 'ResolvedRefs=false/InvalidCACertificateRef'],
      said: /no PEM certificate/,
    },
    {
      name: 'a megabyte of CA bundle',
      p: {},
      cms: () => [
        configMap('ca', { 'ca.crt': `${ca.cert}\n`.repeat(Math.ceil(1_048_576 / ca.cert.length)) }),
      ],
      status: ['Accepted=false/NoValidCACertificate', 'ResolvedRefs=false/InvalidCACertificateRef'],
      said: /over the 262144 allowed/,
    },
    {
      name: 'a reference to a Secret',
      p: { refs: [{ group: '', kind: 'Secret', name: 'ca' }] },
      cms: () => [configMap('ca', { 'ca.crt': ca.cert })],
      status: ['Accepted=false/NoValidCACertificate', 'ResolvedRefs=false/InvalidKind'],
      said: /core\/Secret is not a ConfigMap/,
    },
    {
      name: 'a hostname with config syntax',
      p: { hostname: 'a.example.com verifyhost none' },
      cms: () => [configMap('ca', { 'ca.crt': ca.cert })],
      status: ['Accepted=false/Invalid'],
      said: /is not a DNS name/,
    },
    {
      name: 'a subjectAltName with quotes',
      p: { sans: [{ type: 'Hostname', hostname: 'a.example.com" verify none "' }] },
      cms: () => [configMap('ca', { 'ca.crt': ca.cert })],
      status: ['Accepted=false/Invalid'],
      said: /is not a DNS name/,
    },
    {
      name: 'a URI subjectAltName',
      p: { sans: [{ type: 'URI', uri: 'spiffe://cluster.local/ns/a/sa/b' }] },
      cms: () => [configMap('ca', { 'ca.crt': ca.cert })],
      status: ['Accepted=false/Invalid'],
      said: /a URI name is not verified by the memory load balancer/,
    },
    {
      name: 'more names than the device verifies',
      p: {
        sans: [
          { type: 'Hostname', hostname: 'a.example.com' },
          { type: 'Hostname', hostname: 'b.example.com' },
        ],
      },
      cms: () => [configMap('ca', { 'ca.crt': ca.cert })],
      status: ['Accepted=false/Invalid'],
      said: /at most 1 names, not 2/,
    },
    {
      name: 'an option',
      p: { options: { 'example.com/min-tls': '1.3' } },
      cms: () => [configMap('ca', { 'ca.crt': ca.cert })],
      status: ['Accepted=false/Invalid'],
      said: /spec\.options: "example\.com\/min-tls" not supported/,
    },
    {
      name: 'a well-known set the device does not have',
      p: { wellKnown: 'example.com/corporate' },
      cms: () => [],
      status: ['Accepted=false/Invalid'],
      said: /"example\.com\/corporate" is not supported/,
    },
  ];
  for (const c of cases)
    it(c.name, () => {
      const t = run([policy(c.p)], c.cms());
      assertRefused(t);
      assert.deepEqual(t.statusOf('tls'), c.status);
      assert.match(t.messageOf('tls'), c.said);
      assert.match(t.routeMessage, /BackendTLSPolicy gateway-conformance-infra\/tls/);
    });

  it('one valid reference of two: the policy applies with it, and names the other', () => {
    const t = run(
      [
        policy({
          refs: [
            { kind: 'ConfigMap', name: 'gone' },
            { kind: 'ConfigMap', name: 'ca' },
          ],
        }),
      ],
      [configMap('ca', { 'ca.crt': ca.cert })],
    );
    assert.equal(t.only?.ca, caPem(ca.cert));
    assert.deepEqual(t.statusOf('tls'), [
      'Accepted=true/Accepted',
      'ResolvedRefs=false/InvalidCACertificateRef',
    ]);
    assert.match(t.messageOf('tls'), /caCertificateRefs\[0\]: ConfigMap gone not found/);
  });

  it('a ConfigMap of another namespace is not read', () => {
    const t = run([policy()], [configMap('ca', { 'ca.crt': ca.cert }, 'gateway-conformance-app-backend')]);
    assertRefused(t);
  });

  it('a device that verifies only the name it sends (HAProxy): a subjectAltName apart from the hostname is refused by name', () => {
    const sniOnly: HttpCapabilities = {
      ...ALL_HTTP,
      backendTls: { systemCa: true, maxVerifyNames: 1, namesApartFromSni: false },
    };
    const cms = [configMap('ca', { 'ca.crt': ca.cert })];
    const apart = run([policy({ sans: [{ type: 'Hostname', hostname: 'san.example.com' }] })], cms, sniOnly);
    assertRefused(apart);
    assert.match(apart.messageOf('tls'), /verifies the certificate against the name it sends/);
    const same = run(
      [policy({ sans: [{ type: 'Hostname', hostname: 'backend.example.com' }] })],
      cms,
      sniOnly,
    );
    assert.deepEqual(same.only?.verifyNames, ['backend.example.com']);
  });

  it('a device without TLS to members: System CAs asked of it are refused as the rest', () => {
    const noSystem = run([policy({ wellKnown: 'System' })], [], {
      ...ALL_HTTP,
      backendTls: { systemCa: false, maxVerifyNames: 1, namesApartFromSni: true },
    });
    assertRefused(noSystem);
    assert.deepEqual(noSystem.statusOf('tls'), ['Accepted=false/Invalid']);
  });
});

describe('BackendTLSPolicy re-encrypt across a change', () => {
  it('a CA rotated in its ConfigMap reaches the pool; the ConfigMap deleted takes the backend out, never clear text', () => {
    const first = run([policy()], [configMap('ca', { 'ca.crt': ca.cert })]);
    const rotated = run([policy()], [configMap('ca', { 'ca.crt': `${ca.cert}${other.cert}` })]);
    assert.notEqual(first.only?.ca, rotated.only?.ca);
    assert.equal(rotated.only?.ca, caPem(`${ca.cert}${other.cert}`), 'both CAs while rotating');
    const gone = run([policy()], []);
    assertRefused(gone);
    const policyGone = run([], []);
    assert.ok(policyGone.route.includes('ResolvedRefs=True/ResolvedRefs'), 'no policy: clear text, as asked');
    assert.ok(policyGone.routes.every((x) => !TLS_POOL.test(x.pool) && x.pool !== ''));
  });
});

describe('BackendTLSPolicy under a weighted rule', () => {
  /** A rule splitting between the policy's Service and one in clear text. */
  function split(http: HttpCapabilities) {
    const tlsPools = new Map<string, BackendTls>();
    const r = pass({
      routes: [
        route(INFRA, 'split', {
          parentRefs: [parent('same-namespace')],
          rules: [
            {
              backendRefs: [
                backend('infra-backend-v1', 8080, { weight: 1 }),
                backend('infra-backend-v2', 8080, { weight: 1 }),
              ],
            },
          ],
        }),
      ],
      backendTlsPolicies: [policy()],
      configMaps: [configMap('ca', { 'ca.crt': ca.cert })],
      http,
      tlsPools,
    });
    const routes = (vsOf(r, `${INFRA}/same-namespace`)?.routes ?? []).filter(
      (x) => x.source === `HTTPRoute ${INFRA}/split`,
    );
    const resolved = r.routes
      .get(`HTTPRoute ${INFRA}/split`)
      ?.parents[0]?.conditions.find((c) => c.type === 'ResolvedRefs');
    return { routes, resolved, tlsPools };
  }

  it('a device that speaks one TLS to a weighted rule (BIG-IP) refuses a split over TLS and clear text by name: it answers 500, never clear text', () => {
    const t = split({ ...ALL_HTTP, backendTls: { ...ABLE.backendTls!, oneTlsPerSplit: true } });
    assert.equal(t.resolved?.status, false);
    assert.equal(t.resolved?.reason, 'UnsupportedProtocol');
    assert.match(
      t.resolved?.message ?? '',
      /spec\.rules\[0\]\.backendRefs: its backends differ in TLS to members/,
    );
    assert.ok(t.routes.length > 0, 'the rule keeps its place');
    for (const x of t.routes)
      assert.ok(
        x.backends?.length === 2 && x.backends.every((b) => b.pool === null),
        'every share answers 500',
      );
  });

  it('a device that speaks TLS per pool serves the split: one share over TLS, the other in clear text', () => {
    const t = split(ABLE);
    assert.equal(t.resolved?.status, true);
    const pools = t.routes[0]?.backends?.map((b) => b.pool) ?? [];
    assert.equal(pools.length, 2);
    assert.ok(
      pools.some((p) => p !== null && t.tlsPools.has(p)),
      'one share to the TLS pool',
    );
    assert.ok(
      pools.some((p) => p !== null && !t.tlsPools.has(p)),
      'the other in clear text',
    );
  });
});
