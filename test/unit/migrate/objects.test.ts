/**
 * `npl-lb migrate ako|cis -f` (issue 35, item 5): AKO's HTTPRules (with the Ingresses they refine),
 * HostRules and AviInfraSettings, and CIS's VirtualServers and TransportServers, become
 * BackendPolicies and Ingresses that the chart's CRD and the API server take, each field carried
 * over or noted with why; hostile values never reach an object (a property over random input);
 * bad command lines are one line and exit code 2.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { parseAllDocuments } from 'yaml';
import { migrateAkoObjects } from '../../../adapters/avi/migrate/ako-objects.ts';
import { parseSend } from '../../../adapters/f5/migrate/cis-monitor.ts';
import { migrateCisObjects } from '../../../adapters/f5/migrate/cis-objects.ts';
import {
  OBJECT_NAME,
  type ObjectsMigration,
  renderObjects,
  SERVICE_NAME,
  sourceObjectSchema,
} from '../../../src/migrate/objects.ts';
import { installNplLbCrds } from '../../../src/sandbox/npl-lb-crds.ts';
import { installGatewayApiCrds } from '../../../src/sandbox/gateway-api.ts';
import { backendTlsPolicySchema } from '../../../src/kube/backend-tls-objects.ts';
import { caBundle, DNS_NAME } from '../../../src/source/gateway/backend-tls.ts';
import { checkPolicySpec } from '../../../src/source/backend-policies.ts';
import { hostProblem, pathProblem } from '../../../src/source/validate.ts';
import { CLI, ROOT, run, runCli } from '../../support/cli-process.ts';
import { api, useSandbox } from '../../support/sandbox.ts';
import { testAuthority } from '../../support/certs.ts';

const FIXTURES = 'test/fixtures/migrate';

async function migrated(args: string[]): Promise<{ objects: Record<string, unknown>[]; text: string }> {
  const { stdout } = await run(process.execPath, [...CLI, 'migrate', ...args], { cwd: ROOT });
  const objects = parseAllDocuments(stdout)
    .map((d) => d.toJS() as Record<string, unknown> | null)
    .filter((o): o is Record<string, unknown> => o !== null);
  return { objects, text: stdout };
}

const policy = (name: string, ns: string, target: object, settings: object) => ({
  apiVersion: 'npl-lb.io/v1alpha1',
  kind: 'BackendPolicy',
  metadata: { name, namespace: ns },
  spec: { targetRefs: [{ group: '', kind: 'Service', ...target }], ...settings },
});

/** Every object is one the controller's boundary takes: no raw hostile value gets through. */
function assertClean(m: ObjectsMigration): void {
  for (const o of m.objects) {
    const spec = o.spec as Record<string, unknown>;
    const meta = o.metadata as { name: string; namespace: string };
    assert.match(meta.namespace, SERVICE_NAME);
    assert.match(meta.name, /^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/);
    if (o.kind === 'BackendPolicy') {
      assert.ok(!('problem' in checkPolicySpec(spec)), JSON.stringify(spec));
      for (const r of spec.targetRefs as { name: string }[]) assert.match(r.name, SERVICE_NAME);
    } else if (o.kind === 'BackendTLSPolicy') {
      const p = backendTlsPolicySchema.parse(o);
      for (const r of p.spec.targetRefs) assert.match(r.name, SERVICE_NAME);
      assert.match(p.spec.validation.hostname, DNS_NAME);
    } else if (o.kind === 'ConfigMap') {
      const text = (o.data as Record<string, string>)['ca.crt'] ?? '';
      const parsed = caBundle(text);
      assert.ok('pem' in parsed && parsed.pem === text, 'a CA written again from its parse');
    } else {
      assert.equal(o.kind, 'Ingress');
      for (const t of (spec.tls ?? []) as { hosts: string[]; secretName: string }[]) {
        assert.match(t.secretName, OBJECT_NAME);
        for (const h of t.hosts) assert.equal(hostProblem(h), undefined);
      }
      const annotations = (o.metadata as { annotations?: Record<string, string> }).annotations ?? {};
      const serverName = annotations['npl-lb.io/backend-tls-server-name'];
      if (serverName !== undefined) assert.match(serverName, DNS_NAME);
      const ca = annotations['npl-lb.io/backend-tls-ca'];
      if (ca !== undefined) assert.match(ca, OBJECT_NAME);
      for (const rule of spec.rules as {
        host?: string;
        http: { paths: { path: string; backend: { service: { name: string } } }[] };
      }[]) {
        assert.equal(hostProblem(rule.host ?? ''), undefined);
        for (const p of rule.http.paths) {
          assert.equal(pathProblem(p.path, 'Prefix'), undefined);
          assert.match(p.backend.service.name, SERVICE_NAME);
        }
      }
    }
  }
}

describe('npl-lb migrate ako -f', () => {
  it('HTTPRule paths become BackendPolicies on the Services the Ingresses send them to; the rest is noted', async () => {
    const { objects, text } = await migrated(['ako', '-f', `${FIXTURES}/ako-objects.yaml`]);
    const sticky = {
      algorithm: 'SourceHash',
      sessionPersistence: { type: 'SourceIP' },
      healthCheck: { type: 'TCP' },
    };
    assert.deepEqual(objects, [
      // /foo takes /foo and /foo/admin (AKO's rule); the Service's port 80 is named web.
      policy('my-http-rule-foo-svc-web', 'purple-l7', { name: 'foo-svc', sectionName: 'web' }, sticky),
      policy('my-http-rule-admin-svc-http', 'purple-l7', { name: 'admin-svc', sectionName: 'http' }, sticky),
      // /bar re-encrypts (no destinationCA: the system's CAs), verified against the Service's DNS name.
      {
        apiVersion: 'gateway.networking.k8s.io/v1',
        kind: 'BackendTLSPolicy',
        metadata: { name: 'my-http-rule-bar-svc-tls', namespace: 'purple-l7' },
        spec: {
          targetRefs: [{ group: '', kind: 'Service', name: 'bar-svc' }],
          validation: { hostname: 'bar-svc.purple-l7.svc.cluster.local', wellKnownCACertificates: 'System' },
        },
      },
      // Port 8080 of bar-svc has no name given: the whole Service.
      policy('my-http-rule-bar-svc', 'purple-l7', { name: 'bar-svc' }, { algorithm: 'LeastConnections' }),
    ]);
    for (const line of [
      /foo\.avi\.internal\/bar \(by hand\): applicationPersistence cookie-userid-persistence is a profile on the Avi Controller/,
      /foo\.avi\.internal\/bar \(by hand\): healthMonitors my-health-monitor-1 is a monitor on the Avi Controller/,
      /foo\.avi\.internal\/bar \(no equivalent\): healthMonitors my-health-monitor-2: a BackendPolicy has one check/,
      /foo\.avi\.internal\/bar tls\.sslProfile \(no equivalent\): an SSL profile on the Avi Controller/,
      /foo\.avi\.internal\/bar tls \(changed\): re-encryption is BackendTLSPolicy purple-l7\/my-http-rule-bar-svc-tls, .*bar-svc\.purple-l7\.svc\.cluster\.local: check it/,
      /foo\.avi\.internal\/baz \(by hand\): no Ingress or Route given with -f sends foo\.avi\.internal\/baz/,
      /foo\.avi\.internal\/qux \(no equivalent\): loadBalancerPolicy LB_ALGORITHM_FEWEST_SERVERS/,
      /HostRule purple-l7\/secure-waf-policy virtualhost\.wafPolicy \(no equivalent\)/,
      /HostRule purple-l7\/secure-waf-policy virtualhost\.aliases \(by hand\): add each alias as a host/,
      /AviInfraSetting default\/my-infrasetting seGroup \(by hand\): .*adapter\.avi\.serviceEngineGroup/,
      /AviInfraSetting default\/my-infrasetting l7Settings \(no equivalent\)/,
    ])
      assert.match(text, line);
    assert.match(text, /^# Review the notes at the end, then: kubectl apply -f <this file>$/m);
  });

  it("an HTTPRule re-encrypting with a destinationCA: a ConfigMap of the CA written again from its parse, the policy naming it, and the Ingress's annotations to add; a CA that does not parse is by hand", async () => {
    const ca = await testAuthority('ako destination ca');
    const objects = (tls: Record<string, unknown>) =>
      [
        {
          kind: 'Ingress',
          metadata: { name: 'i', namespace: 'a' },
          spec: {
            rules: [
              {
                host: 'h.example',
                http: { paths: [{ path: '/', backend: { service: { name: 's', port: { number: 443 } } } }] },
              },
            ],
          },
        },
        {
          kind: 'HTTPRule',
          metadata: { name: 'r', namespace: 'a' },
          spec: { fqdn: 'h.example', paths: [{ target: '/', tls }] },
        },
      ].map((o) => sourceObjectSchema.parse(o));
    const good = migrateAkoObjects(objects({ type: 'reencrypt', destinationCA: `# "} junk\n${ca.cert}` }));
    assertClean(good);
    assert.deepEqual(
      good.objects.map((o) => `${o.kind as string} ${(o.metadata as { name: string }).name}`),
      ['ConfigMap r-s-tls-ca', 'BackendTLSPolicy r-s-tls'],
    );
    const cm = good.objects[0] as { data: Record<string, string> };
    assert.doesNotMatch(cm.data['ca.crt'] ?? '', /junk/, 'only the parsed certificate is kept');
    assert.deepEqual((good.objects[1] as { spec: { validation: unknown } }).spec.validation, {
      hostname: 's.a.svc.cluster.local',
      caCertificateRefs: [{ group: '', kind: 'ConfigMap', name: 'r-s-tls-ca' }],
    });
    // The Ingress the path is in takes re-encryption from its annotations: named, with them.
    assert.match(
      good.notes.map((n) => `${n.from} (${n.kind}): ${n.why}`).join('\n'),
      /h\.example\/ tls \(by hand\): Ingress a\/i re-encrypts by its annotations, not by the BackendTLSPolicy .*npl-lb\.io\/backend-protocol: HTTPS, npl-lb\.io\/backend-tls-server-name: s\.a\.svc\.cluster\.local .*npl-lb\.io\/backend-tls-ca: r-s-tls-ca;/,
    );
    const bad = migrateAkoObjects(objects({ type: 'reencrypt', destinationCA: 'not a certificate' }));
    assert.deepEqual(bad.objects, []);
    assert.match(
      bad.notes.map((n) => `${n.from} (${n.kind}): ${n.why}`).join('\n'),
      /tls \(by hand\): its CA cannot be used \(ca\.crt holds no PEM certificate\)/,
    );
    const edge = migrateAkoObjects(objects({ type: 'edge' }));
    assert.match(edge.notes.map((n) => n.why).join('\n'), /tls\.type "edge": only reencrypt is carried/);
  });

  it('a Service given two settings by two rules keeps the first, and says so', () => {
    const ing = {
      kind: 'Ingress',
      metadata: { name: 'i', namespace: 'a' },
      spec: {
        rules: [
          {
            host: 'h.example',
            http: { paths: [{ path: '/', backend: { service: { name: 's', port: { number: 80 } } } }] },
          },
        ],
      },
    };
    const rule = (name: string, algorithm: string) => ({
      kind: 'HTTPRule',
      metadata: { name, namespace: 'a' },
      spec: { fqdn: 'h.example', paths: [{ target: '/', loadBalancerPolicy: { algorithm } }] },
    });
    const m = migrateAkoObjects(
      [ing, rule('one', 'LB_ALGORITHM_LEAST_CONNECTIONS'), rule('two', 'LB_ALGORITHM_ROUND_ROBIN')].map((o) =>
        sourceObjectSchema.parse(o),
      ),
    );
    assert.equal(m.objects.length, 1);
    assert.equal((m.objects[0]!.spec as { algorithm: string }).algorithm, 'LeastConnections');
    assert.match(m.notes[0]!.why, /already has the policy from HTTPRule a\/one/);
  });
});

describe('npl-lb migrate cis -f', () => {
  it('a VirtualServer becomes an Ingress of the class and a BackendPolicy per pool; a TransportServer a policy', async () => {
    const { objects, text } = await migrated([
      'cis',
      '-f',
      `${FIXTURES}/cis-objects.yaml`,
      '--ingress-class=shop',
    ]);
    const paths = [
      { path: '/coffee', pathType: 'Prefix', backend: { service: { name: 'svc-1', port: { number: 80 } } } },
      { path: '/tea', pathType: 'Prefix', backend: { service: { name: 'svc-2', port: { name: 'http' } } } },
    ];
    assert.deepEqual(
      objects.find((o) => o.kind === 'Ingress'),
      {
        apiVersion: 'networking.k8s.io/v1',
        kind: 'Ingress',
        metadata: { name: 'cafe-virtual-server', namespace: 'default' },
        spec: {
          ingressClassName: 'shop',
          rules: [
            { host: 'cafe.example.com', http: { paths } },
            { host: 'www.cafe.example.com', http: { paths } },
          ],
        },
      },
    );
    assert.deepEqual(
      objects.filter((o) => o.kind === 'BackendPolicy'),
      [
        policy(
          'cafe-virtual-server-svc-1',
          'default',
          { name: 'svc-1' },
          {
            algorithm: 'LeastConnections',
            sessionPersistence: { type: 'Cookie' },
            // The send string read as the request it is; a 16 s BIG-IP timeout at 5 s is 3 failures.
            healthCheck: {
              type: 'HTTP',
              path: '/coffee/health',
              headers: [{ name: 'Host', value: 'cafe.example.com' }],
              intervalSeconds: 5,
              timeoutSeconds: 5,
              unhealthyThreshold: 3,
            },
          },
        ),
        policy(
          'cafe-virtual-server-svc-2',
          'default',
          { name: 'svc-2', sectionName: 'http' },
          {
            sessionPersistence: { type: 'Cookie' },
            healthCheck: { type: 'TCP', intervalSeconds: 10, timeoutSeconds: 10, unhealthyThreshold: 3 },
          },
        ),
        policy(
          'svc1-tcp-transport-server-svc-3',
          'default',
          { name: 'svc-3' },
          {
            algorithm: 'RoundRobin',
            healthCheck: { type: 'TCP', intervalSeconds: 10, timeoutSeconds: 10, unhealthyThreshold: 1 },
          },
        ),
      ],
    );
    for (const line of [
      /pool svc-2\/tea \(no equivalent\): loadBalancingMethod fastest-node/,
      /pool svc-2\/tea \(no equivalent\): 1 more monitor/,
      /cafe-virtual-server virtualServerAddress \(by hand\): the VIP: the npl-lb\.io\/vip annotation/,
      /cafe-virtual-server iRules \(no equivalent\)/,
      /svc1-tcp-transport-server virtualServerPort \(by hand\): serve Service default\/svc-3 as type LoadBalancer on port 8544/,
      /TLSProfile default\/reencrypt-tls \(by hand\)/,
    ])
      assert.match(text, line);
  });

  it("a VirtualServer's TLSProfile: its Secrets in spec.tls, reencrypt as the Ingress's annotations with the CA by hand; what cannot be carried leaves the Ingress out, never in clear text", () => {
    const vs = (name: string, tlsProfileName: unknown, extra: object = {}) =>
      sourceObjectSchema.parse({
        kind: 'VirtualServer',
        metadata: { name, namespace: 'shop' },
        spec: {
          host: 'tea.example.com',
          hostAliases: ['www.tea.example.com'],
          pools: [{ path: '/', service: 'tea', servicePort: 443, loadBalancingMethod: 'round-robin' }],
          tlsProfileName,
          ...extra,
        },
      });
    const profile = (name: string, tls: object, namespace = 'shop') =>
      sourceObjectSchema.parse({ kind: 'TLSProfile', metadata: { name, namespace }, spec: { tls } });
    const m = migrateCisObjects(
      [
        vs('edge', 'edge-tls'),
        profile('edge-tls', { termination: 'edge', reference: 'secrets', clientSSLs: ['tea-1', 'tea-2'] }),
        vs('reen', 'reen-tls'),
        profile('reen-tls', {
          termination: 'reencrypt',
          reference: 'secret',
          clientSSL: 'tea-front',
          serverSSL: 'tea-back',
          tlsCipher: { tlsVersion: '1.3' },
        }),
        vs('hybrid', 'hybrid-tls'),
        profile('hybrid-tls', {
          termination: 'reencrypt',
          reference: 'hybrid',
          clientSSL: 'tea-front',
          serverSSL: '/Common/serverssl',
          clientSSLParams: { profileReference: 'secret' },
          serverSSLParams: { profileReference: 'bigip' },
        }),
        // Each of these leaves its Ingress out.
        vs('bigip', 'bigip-tls'),
        profile('bigip-tls', { termination: 'edge', reference: 'bigip', clientSSL: '/Common/clientssl' }),
        vs('pass', 'pass-tls'),
        profile('pass-tls', { termination: 'passthrough' }),
        vs('missing', 'not-given'),
        vs('elsewhere', 'other-ns'),
        profile('other-ns', { termination: 'edge', reference: 'secret', clientSSL: 'x' }, 'other'),
        vs('hostile', 'hostile-tls'),
        profile('hostile-tls', {
          termination: 'edge',
          reference: 'secret',
          clientSSL: 'a\n---\nkind: Secret',
        }),
        vs('odd', 'odd-tls'),
        profile('odd-tls', { termination: 'offload', reference: 'secret', clientSSL: 'x' }),
        vs('plain', undefined),
        // A null or empty name is no TLSProfile, as CIS reads it.
        vs('nulled', null),
      ],
      'npl-lb',
    );
    assertClean(m);
    const ingresses = new Map(
      m.objects
        .filter((o) => o.kind === 'Ingress')
        .map((o) => [
          (o.metadata as { name: string }).name,
          o as { metadata: { annotations?: object }; spec: { tls?: unknown } },
        ]),
    );
    assert.deepEqual([...ingresses.keys()].sort(), ['edge', 'hybrid', 'nulled', 'plain', 'reen']);
    const hosts = ['tea.example.com', 'www.tea.example.com'];
    assert.deepEqual(ingresses.get('edge')!.spec.tls, [
      { hosts, secretName: 'tea-1' },
      { hosts, secretName: 'tea-2' },
    ]);
    assert.equal(ingresses.get('edge')!.metadata.annotations, undefined);
    for (const name of ['reen', 'hybrid']) {
      assert.deepEqual(ingresses.get(name)!.spec.tls, [{ hosts, secretName: 'tea-front' }]);
      assert.deepEqual(ingresses.get(name)!.metadata.annotations, {
        'npl-lb.io/backend-protocol': 'HTTPS',
        'npl-lb.io/backend-tls-server-name': 'tea.example.com',
        'npl-lb.io/backend-tls-ca': `${name}-ca`,
      });
    }
    assert.equal(ingresses.get('plain')!.spec.tls, undefined);
    assert.equal(ingresses.get('nulled')!.spec.tls, undefined);
    // The pools' BackendPolicies are made whether or not their Ingress is.
    assert.equal(m.objects.filter((o) => o.kind === 'BackendPolicy').length, 1);
    const text = m.notes.map((n) => `${n.from} (${n.kind}): ${n.why}`).join('\n');
    for (const line of [
      /TLSProfile shop\/reen-tls termination reencrypt \(by hand\): .*kubectl -n shop get secret tea-back .*create configmap reen-ca --from-file=ca\.crt/,
      /TLSProfile shop\/hybrid-tls termination reencrypt \(by hand\): .*BIG-IP server SSL profile "\/Common\/serverssl": put it in ConfigMap shop\/hybrid-ca/,
      /TLSProfile shop\/reen-tls tls\.tlsCipher \(no equivalent\)/,
      /VirtualServer shop\/bigip tlsProfileName \(by hand\): .*BIG-IP profile "\/Common\/clientssl": put it in a Secret .*; the Ingress is left out until then/,
      /VirtualServer shop\/pass tlsProfileName \(by hand\): .*Passthrough mode and a TLSRoute/,
      /VirtualServer shop\/missing tlsProfileName \(by hand\): TLSProfile "not-given" was not given/,
      /VirtualServer shop\/elsewhere tlsProfileName \(by hand\): TLSProfile "other-ns" was not given/,
      /VirtualServer shop\/hostile tlsProfileName \(by hand\): .*clientSSL "a\\n---\\nkind: Secret" is not a Secret's name/,
      /VirtualServer shop\/odd tlsProfileName \(by hand\): .*termination "offload" is not edge, reencrypt or passthrough/,
      /TLSProfile other\/other-ns \(by hand\): no VirtualServer given names it/,
    ])
      assert.match(text, line);
    // A profile a VirtualServer names is read with it, not noted again as unnamed.
    assert.doesNotMatch(text, /TLSProfile shop\/edge-tls \(by hand\)/);
  });

  it('a note holding a line break stays one comment line: the printed manifest holds the objects and nothing else', async () => {
    const vs = sourceObjectSchema.parse({
      kind: 'VirtualServer',
      metadata: { name: 'inject', namespace: 'default' },
      spec: {
        host: 'a.example.com',
        pools: [
          {
            path: '/',
            service: 'svc-a',
            servicePort: 80,
            serviceNamespace: 'x\n---\napiVersion: v1\nkind: Namespace\nmetadata: {name: evil}',
            loadBalancingMethod: 'round-robin',
          },
        ],
      },
    });
    const m = migrateCisObjects([vs], 'npl-lb');
    const printed = renderObjects(m, 'test');
    const docs = parseAllDocuments(printed)
      .map((d) => d.toJS() as { kind?: string } | null)
      .filter((d) => d !== null);
    assert.deepEqual(
      docs.map((d) => d.kind),
      m.objects.map((o) => o.kind),
    );
    assert.doesNotMatch(printed, /^kind: Namespace/m);
    assert.match(printed, /route x\\u000a---\\u000aapiVersion: v1/);
  });

  it('send strings: escapes written out or not, HEAD, a bare path; control characters and non-requests refused', () => {
    assert.deepEqual(parseSend('GET /h HTTP/1.1\\r\\nHost: a.example\\r\\nConnection: close\\r\\n\\r\\n'), {
      method: 'GET',
      path: '/h',
      headers: [{ name: 'Host', value: 'a.example' }],
    });
    assert.deepEqual(parseSend('HEAD / HTTP/1.0\r\n\r\n'), { method: 'HEAD', path: '/', headers: [] });
    assert.deepEqual(parseSend('/status'), { method: 'GET', path: '/status', headers: [] });
    assert.equal(parseSend('GET / HTTP/1.1\r\nHost: a\u0007b\r\n'), undefined);
    assert.equal(parseSend('GET / HTTP/1.1\r\nX-Evil\r\n'), undefined);
    assert.equal(parseSend('hello'), undefined);
  });

  it('hostile values never reach an object: each is noted by hand instead', () => {
    const vs = sourceObjectSchema.parse({
      kind: 'VirtualServer',
      metadata: { name: 'evil', namespace: 'default' },
      spec: {
        host: 'Bad_Host;x',
        pools: [
          { path: '/ok', service: 'svc;drop', servicePort: 80, loadBalancingMethod: 'round-robin' },
          { path: '/a b', service: 'svc-a', servicePort: 80, loadBalancingMethod: 'round-robin' },
          { path: '/p', service: 'svc-b', servicePort: '80 ; x' },
          {
            path: '/m',
            service: 'svc-c',
            servicePort: 80,
            monitor: { type: 'http', send: 'GET /h"\\x HTTP/1.1\r\n\r\n', interval: 'often' },
          },
        ],
      },
    });
    const other = sourceObjectSchema.parse({
      kind: 'VirtualServer',
      metadata: { name: 'x', namespace: '../etc' },
      spec: {},
    });
    const m = migrateCisObjects([vs, other], 'npl-lb');
    assertClean(m);
    const text = m.notes.map((n) => `${n.from} (${n.kind}): ${n.why}`).join('\n');
    assert.match(text, /host \(by hand\): host "Bad_Host;x" is not a DNS-1123 subdomain/);
    assert.match(text, /"default\/svc;drop" is not a Service's namespace and name/);
    assert.match(text, /service "svc;drop" is not a Service name/);
    assert.match(text, /path "\/a b" holds a control character or whitespace/);
    assert.match(text, /servicePort "80 ; x" is neither a port number nor a port name/);
    assert.match(
      text,
      /pool svc-c\/m \(by hand\): the BackendPolicy it gives would be refused \(spec\.healthCheck\.path/,
    );
    assert.match(text, /VirtualServer "\.\.\/etc\/x" \(by hand\): not a Kubernetes namespace and name/);
    // The good path still routes: /m to svc-c (its check refused, not its route).
    const ing = m.objects.find((o) => o.kind === 'Ingress') as {
      spec: { rules: { host?: string; http: { paths: { path: string }[] } }[] };
    };
    assert.deepEqual(
      ing.spec.rules.map((r) => [r.host, r.http.paths.map((p) => p.path)]),
      [[undefined, ['/m']]],
    );
  });

  it('any objects, however odd, give clean objects or notes, never a crash (property)', () => {
    const str = fc.oneof(
      fc.string({ maxLength: 20 }),
      fc.constantFrom('svc-1', '/', '/a', 'http', 'a.example', 'GET /x HTTP/1.1\r\nHost: a\r\n\r\n'),
    );
    const val = fc.oneof(
      str,
      fc.integer({ min: -5, max: 70000 }),
      fc.constant(null),
      fc.array(str, { maxLength: 2 }),
    );
    const pool = fc.record(
      {
        path: val,
        service: val,
        servicePort: val,
        serviceNamespace: val,
        loadBalancingMethod: val,
        monitor: fc.record({
          type: fc.constantFrom('http', 'tcp', 'https', 'x'),
          send: val,
          recv: val,
          interval: val,
          timeout: val,
        }),
        monitors: val,
      },
      { requiredKeys: [] },
    );
    const obj = fc.record({
      kind: fc.constantFrom(
        'VirtualServer',
        'TransportServer',
        'TLSProfile',
        'HTTPRule',
        'Ingress',
        'HostRule',
        'Other',
      ),
      metadata: fc.record({
        name: fc.oneof(str, fc.constant('web')),
        namespace: fc.oneof(str, fc.constant('default')),
      }),
      spec: fc.record(
        {
          host: val,
          fqdn: val,
          hostAliases: val,
          pools: fc.array(pool, { maxLength: 3 }),
          pool,
          persistenceProfile: val,
          paths: fc.array(
            fc.record({
              target: val,
              loadBalancerPolicy: fc.record({ algorithm: fc.constantFrom('LB_ALGORITHM_ROUND_ROBIN', 'x') }),
              healthMonitors: val,
            }),
            { maxLength: 2 },
          ),
          rules: val,
          virtualhost: val,
          tlsProfileName: fc.oneof(val, fc.constant('web')),
          tls: fc.record(
            {
              termination: fc.oneof(fc.constantFrom('edge', 'reencrypt', 'passthrough'), val),
              reference: fc.oneof(fc.constantFrom('secret', 'bigip', 'hybrid'), val),
              clientSSL: val,
              clientSSLs: val,
              serverSSL: val,
              clientSSLParams: fc.record({
                profileReference: fc.oneof(fc.constantFrom('secret', 'bigip'), val),
              }),
              serverSSLParams: val,
            },
            { requiredKeys: [] },
          ),
        },
        { requiredKeys: [] },
      ),
    });
    fc.assert(
      fc.property(fc.array(obj, { maxLength: 4 }), (raw) => {
        const objects = raw.map((o) => sourceObjectSchema.parse(o));
        for (const m of [migrateCisObjects(objects, 'npl-lb'), migrateAkoObjects(objects)]) {
          assertClean(m);
          // The printed manifest holds these objects and nothing else: no note leaves its comment.
          const docs = parseAllDocuments(renderObjects(m, 'test')).filter((d) => d.toJS() !== null);
          assert.equal(docs.length, m.objects.length);
        }
      }),
      { numRuns: 300 },
    );
  });
});

describe('the migrated objects at the API', () => {
  it("the chart's BackendPolicy CRD and the API server take every object migrate prints", async (t) => {
    const { url } = await useSandbox(t);
    assert.equal(await installNplLbCrds(url), 2);
    await installGatewayApiCrds(url);
    assert.equal(
      (await api(url, 'POST', '/api/v1/namespaces', { metadata: { name: 'purple-l7' } })).status,
      201,
    );
    const all = [
      ...(await migrated(['ako', '-f', `${FIXTURES}/ako-objects.yaml`])).objects,
      ...(await migrated(['cis', '-f', `${FIXTURES}/cis-objects.yaml`])).objects,
    ];
    assert.equal(all.length, 9);
    for (const o of all) {
      const meta = o.metadata as { name: string; namespace: string };
      const path =
        o.kind === 'Ingress'
          ? `/apis/networking.k8s.io/v1/namespaces/${meta.namespace}/ingresses`
          : o.kind === 'BackendTLSPolicy'
            ? `/apis/gateway.networking.k8s.io/v1/namespaces/${meta.namespace}/backendtlspolicies`
            : `/apis/npl-lb.io/v1alpha1/namespaces/${meta.namespace}/backendpolicies`;
      const r = await api(url, 'POST', path, o);
      assert.equal(r.status, 201, `${o.kind} ${meta.name}: ${JSON.stringify(r.body)}`);
    }
  });
});

describe('npl-lb migrate -f: bad command lines', () => {
  it('each is one line and exit code 2', async (t) => {
    const dir = mkdtempSync(join(tmpdir(), 'npl-migrate-f-'));
    t.after(() => rmSync(dir, { recursive: true, force: true }));
    writeFileSync(join(dir, 'nokind.yaml'), 'metadata: {name: x}\n');
    writeFileSync(
      join(dir, 'list.yaml'),
      'kind: List\nitems:\n  - kind: TLSProfile\n    metadata: {name: t}\n',
    );
    const cases: [string[], RegExp][] = [
      [
        ['ako', `${FIXTURES}/ako-values.yaml`, '-f', `${FIXTURES}/ako-objects.yaml`],
        /give the settings and the objects in two runs/,
      ],
      [['cis', '-f'], /-f needs a file/],
      [['cis', '-f', join(dir, 'missing.yaml')], /cannot read/],
      [['cis', '-f', join(dir, 'nokind.yaml')], /not a Kubernetes object \(no kind\)/],
      [
        ['cis', '-f', `${FIXTURES}/cis-objects.yaml`, '--ingress-class=Not A Name'],
        /--ingress-class "Not A Name" is not an object name/,
      ],
      [
        ['ako', '--ingress-class=x', `${FIXTURES}/ako-values.yaml`],
        /--ingress-class names the class of the Ingresses -f migrates/,
      ],
    ];
    for (const [args, re] of cases) {
      const r = await runCli(['migrate', ...args]);
      assert.equal(r.code, 2, `${args.join(' ')}: ${r.stderr}`);
      assert.match(r.stderr, re);
      assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
    }
    // A List (kubectl get -o yaml) is read item by item.
    const list = await migrated(['cis', '-f', join(dir, 'list.yaml')]);
    assert.match(list.text, /TLSProfile default\/t \(by hand\)/);
  });
});
