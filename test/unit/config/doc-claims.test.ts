/**
 * Issue 49, item 5: what the README and the docs claim agrees with what proves it. The conformance
 * figures (tests per profile, features claimed) are read from the ConformanceReports the harness
 * writes; every Event reason or error code the README names is one docs/errors.md lists (or a
 * Gateway API or Kubernetes reason the spec defines); the troubleshooting page and the README say
 * the same of which load balancer filters clients.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { it } from 'node:test';
import { parse } from 'yaml';
import { z } from 'zod';
import { DATAPLANE_CAPABILITIES, HAPROXY_CAPABILITIES } from '../../../adapters/haproxy/capabilities.ts';

const read = (path: string) => readFileSync(new URL(`../../../${path}`, import.meta.url), 'utf8');

const stats = z.object({ Passed: z.number(), Skipped: z.number(), Failed: z.number() });
const reportSchema = z.object({
  profiles: z.array(
    z.object({
      name: z.string(),
      core: z.object({ statistics: stats }),
      extended: z
        .object({ statistics: stats, supportedFeatures: z.array(z.string()).default([]) })
        .optional(),
    }),
  ),
});
type Report = z.infer<typeof reportSchema>;

const report = (adapter: string): Report =>
  reportSchema.parse(parse(read(`docs/conformance/${adapter}-report.yaml`)));
const profile = (r: Report, name: string) => {
  const p = r.profiles.find((x) => x.name === name);
  assert.ok(p, `profile ${name}`);
  return p;
};
const total = (s: z.infer<typeof stats>) => s.Passed + s.Skipped + s.Failed;

it("the README's conformance figures are the HAProxy report's", () => {
  const readme = read('README.md').replace(/\s+/g, ' ');
  const haproxy = report('haproxy-runtime');
  const claimed = (re: RegExp) => {
    const m = re.exec(readme);
    assert.ok(m, `the README says ${re.source}`);
    return Number(m[1]);
  };
  assert.equal(
    claimed(/GATEWAY-HTTP core \((\d+) tests\)/),
    total(profile(haproxy, 'GATEWAY-HTTP').core.statistics),
  );
  assert.equal(
    claimed(/GATEWAY-TLS core \((\d+) tests\)/),
    total(profile(haproxy, 'GATEWAY-TLS').core.statistics),
  );
  assert.equal(
    claimed(/GATEWAY-GRPC core \((\d+) tests/),
    total(profile(haproxy, 'GATEWAY-GRPC').core.statistics),
  );
  assert.equal(
    claimed(/extended features each GatewayClass claims \((\d+) on HAProxy\)/),
    profile(haproxy, 'GATEWAY-HTTP').extended!.supportedFeatures.length,
  );
  // Every HAProxy report (runtime, Data Plane v2 and v3) passes the same, as the README says, Mixed
  // mode (both TLS modes on one port) included.
  assert.match(readme, /Data Plane API v2 and v3, each also claiming GATEWAY-TLS's\s+`TLSRouteModeMixed`/);
  assert.ok(profile(haproxy, 'GATEWAY-TLS').extended!.supportedFeatures.includes('TLSRouteModeMixed'));
  for (const adapter of ['haproxy-dataplane-v2', 'haproxy-dataplane-v3'])
    assert.deepEqual(report(adapter).profiles, haproxy.profiles, adapter);
});

it("the README's feature table claims only features a report proves, for the adapters it names", () => {
  const readme = read('README.md');
  const features = (adapter: string) =>
    new Set(report(adapter).profiles.flatMap((p) => p.extended?.supportedFeatures ?? []));
  // Phrase of the README's HTTPRoute row -> the upstream feature, and who the README says has it.
  const claims: [RegExp, string, string[]][] = [
    [/rule `timeouts` and CORS \(HAProxy\)/, 'HTTPRouteRequestTimeout', ['haproxy-runtime']],
    [/rule `timeouts` and CORS \(HAProxy\)/, 'HTTPRouteCORS', ['haproxy-runtime']],
    [
      /mirrors \(HAProxy\); WebSocket;/,
      'HTTPRouteBackendProtocolWebSocket',
      ['haproxy-runtime', 'avi', 'f5'],
    ],
    // Every HAProxy report is held equal to the runtime one's (above).
    [/request mirrors \(HAProxy\)/, 'HTTPRouteRequestMirror', ['haproxy-runtime']],
    [/request mirrors \(HAProxy\)/, 'HTTPRouteRequestMultipleMirrors', ['haproxy-runtime']],
    [/request mirrors \(HAProxy\)/, 'HTTPRouteRequestPercentageMirror', ['haproxy-runtime']],
    [/named rules/, 'HTTPRouteNamedRouteRule', ['haproxy-runtime', 'avi', 'f5']],
    [/parentRef `port`/, 'HTTPRouteParentRefPort', ['haproxy-runtime', 'avi', 'f5']],
    [/parentRef `port`/, 'HTTPRouteDestinationPortMatching', ['haproxy-runtime', 'avi', 'f5']],
    [/method;/, 'HTTPRouteMethodMatching', ['haproxy-runtime', 'f5']],
    [
      /TLS \(Passthrough; Terminate on HAProxy and BIG-IP\)/,
      'TLSRouteModeTerminate',
      ['haproxy-runtime', 'f5'],
    ],
  ];
  for (const [phrase, feature, adapters] of claims) {
    assert.match(readme, phrase);
    for (const a of adapters) assert.ok(features(a).has(feature), `${a} claims ${feature}`);
  }
  // Nobody but HAProxy claims timeouts or CORS (the README says "(HAProxy)"), and Avi no Terminate
  // mode.
  for (const a of ['avi', 'f5'])
    for (const f of ['HTTPRouteRequestTimeout', 'HTTPRouteCORS'])
      assert.ok(!features(a).has(f), `${a} does not claim ${f}`);
  assert.ok(!features('avi').has('TLSRouteModeTerminate'), 'avi does not claim TLSRouteModeTerminate');
});

it("docs/conformance/README.md's table is each report's", () => {
  const page = read('docs/conformance/README.md');
  for (const adapter of ['haproxy-runtime', 'haproxy-dataplane-v3', 'haproxy-dataplane-v2', 'avi', 'f5']) {
    const row = page.split('\n').find((l) => l.startsWith(`| [${adapter}-report.yaml]`));
    assert.ok(row, adapter);
    const http = profile(report(adapter), 'GATEWAY-HTTP');
    const ext = http.extended!;
    assert.match(row, new RegExp(`\\(${ext.supportedFeatures.length} features\\)`), `${adapter}: features`);
    if (ext.statistics.Skipped === 0)
      assert.match(row, new RegExp(`${ext.statistics.Passed} of ${total(ext.statistics)} passed`), adapter);
    else assert.match(row, new RegExp(`${ext.statistics.Passed} passed; ${ext.statistics.Skipped} skipped`));
  }
});

it('every Event reason or error code the README names is one docs/errors.md lists', async () => {
  const { EventReasons } = await import('../../../src/kube/event-reasons.ts');
  const { ADAPTER_ERROR_CODES } = await import('../../../src/adapter/errors.ts');
  const errors = read('docs/errors.md');
  const documented = new Set([...errors.matchAll(/^\| `([A-Za-z0-9_]+)`\s*\|/gm)].map((m) => m[1]!));
  for (const r of Object.values(EventReasons)) assert.ok(documented.has(r), `errors.md lists ${r}`);
  for (const c of Object.keys(ADAPTER_ERROR_CODES)) assert.ok(documented.has(c), `errors.md lists ${c}`);
  // The spec's reasons (Gateway API conditions, a Deployment's) are theirs, not npl-lb's.
  const theirs = new Set([
    // BackendTLSPolicy's (GEP-1897) and a Gateway listener's client certificate validation.
    'NoValidCACertificate',
    'InvalidCACertificateRef',
    'InvalidCACertificateKind',
    'InvalidKind',
    // A Gateway's backend client certificate reference (GEP-3155).
    'InvalidClientCertificateRef',
    'UnsupportedValue',
    'UnsupportedProtocol',
    'NotAllowedByListeners',
    'ReplicaFailure',
  ]);
  const looksLikeReason =
    /^(Invalid|Unsupported|Ensured|Removed|Restored|Draining|Waiting|Sync|NodePortLocal)[A-Z]|(Failed|Conflict|NotServed|Mismatch|Served|Rejected|Exhausted|InUse)$/;
  const named = [...read('README.md').matchAll(/`([A-Z][A-Za-z0-9]+)`/g)].map((m) => m[1]!);
  const reasons = named.filter((n) => looksLikeReason.test(n) || n === 'InUse');
  assert.ok(reasons.length >= 15, `the README names reasons (${reasons.length})`);
  for (const r of reasons)
    assert.ok(documented.has(r) || theirs.has(r), `README names ${r}: not in docs/errors.md`);
});

it('the docs agree on which load balancer filters clients (loadBalancerSourceRanges)', async () => {
  const { F5_CAPABILITIES } = await import('../../../adapters/f5/capabilities.ts');
  const { aviCapabilities } = await import('../../../adapters/avi/capabilities.ts');
  assert.equal(F5_CAPABILITIES.sourceRanges, true, 'BIG-IP filters a Service');
  assert.notEqual(aviCapabilities(false).sourceRanges, true, "Avi does not filter a Service's VIP");
  const troubleshooting = read('docs/troubleshooting.md').replace(/\s+/g, ' ');
  assert.doesNotMatch(troubleshooting, /client filters on Avi or BIG-IP/, 'BIG-IP filters clients');
  assert.match(troubleshooting, /a Service's client filter on Avi/);
  const readme = read('README.md').replace(/\s+/g, ' ');
  assert.match(readme, /BIG-IP: an iRule of the virtual server/);
  assert.match(readme, /a load balancer that cannot filter \(Avi/);
});

it('docs/adapters/haproxy-dataplane.md: the Data Plane transport serves what the runtime one does', () => {
  assert.match(
    read('docs/adapters/haproxy-dataplane.md'),
    /`DATAPLANE_CAPABILITIES` is `HAPROXY_CAPABILITIES`/,
  );
  assert.deepEqual(DATAPLANE_CAPABILITIES, HAPROXY_CAPABILITIES);
});
