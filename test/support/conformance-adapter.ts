/**
 * One adapter's whole conformance run, as test/e2e/conformance*.test.ts check it: every core test
 * passes (on BIG-IP, every one that reads status), the report is upstream's shape, its profiles say
 * what passed, and the committed report under docs/conformance/ agrees. One file per HAProxy
 * transport, so that the suite runs the two long runs side by side.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { parse } from 'yaml';
import { runAdapter } from '../../conformance/run.ts';
import { conformanceReportSchema, renderReport } from '../../conformance/harness/report.ts';
import { ALL_TESTS } from '../../conformance/tests/index.ts';

const committed = (adapter: string) =>
  conformanceReportSchema.parse(
    parse(readFileSync(new URL(`../../docs/conformance/${adapter}-report.yaml`, import.meta.url), 'utf8')),
  );

export type ConformanceAdapter = 'haproxy-runtime' | 'haproxy-dataplane-v3' | 'f5';

export const adapterCaseName = (adapter: ConformanceAdapter): string =>
  `${adapter}: every core test ${adapter === 'f5' ? 'that reads status ' : ''}passes; the report is upstream's shape and the committed one agrees`;

export async function checkAdapterRun(adapter: ConformanceAdapter): Promise<void> {
  const { outcomes, report } = await runAdapter(adapter, ALL_TESTS);
  const failed = outcomes.flatMap((o) => (o.result === 'failed' ? [`${o.name}: ${o.reason}`] : []));
  assert.deepEqual(failed, []);
  const profile = report.profiles[0]!;
  assert.equal(profile.name, 'GATEWAY-HTTP');
  if (adapter === 'f5') {
    // Status only: a test that sends traffic is skipped with why, never counted as passed.
    assert.equal(profile.core.result, 'partial');
    const skipped = outcomes.filter((o) => o.result === 'skipped');
    assert.ok(skipped.length > 0);
    for (const o of skipped)
      assert.match(o.reason, /carries no traffic here: its status assertions passed|does not claim/);
    assert.equal(profile.core.statistics.Passed + profile.core.statistics.Skipped, 37);
  } else {
    assert.equal(profile.core.result, 'success');
    assert.deepEqual(profile.core.statistics, { Passed: 37, Failed: 0, Skipped: 0 });
    // Every extended feature the GatewayClass claims has tests, and they all pass.
    assert.equal(profile.extended?.result, 'success');
    const passed = new Set(outcomes.filter((o) => o.result === 'passed').map((o) => o.name));
    for (const f of profile.extended?.supportedFeatures ?? []) {
      const proving = ALL_TESTS.filter((t) => t.features.includes(f) && passed.has(t.shortName));
      assert.ok(proving.length > 0, `${f} is claimed but no test of it passed`);
    }
    assert.ok((profile.extended?.statistics.Passed ?? 0) >= 13);
  }
  // The rendered YAML parses back to the same report, held to upstream's schema.
  assert.deepEqual(conformanceReportSchema.parse(parse(renderReport(report))), report);
  // GATEWAY-TLS: its core passes where traffic flows (TLS passthrough by SNI, to the TCP and
  // HTTPS echoes), and its status half elsewhere.
  const tls = report.profiles.find((p) => p.name === 'GATEWAY-TLS');
  assert.ok(tls, 'the class claims TLSRoute: a GATEWAY-TLS profile');
  if (adapter === 'f5') assert.equal(tls.core.statistics.Failed, 0);
  else assert.deepEqual(tls.core.statistics, { Passed: 20, Failed: 0, Skipped: 0 });
  // GATEWAY-GRPC: GRPCRoute with real gRPC calls over h2c on HAProxy; BIG-IP does not claim it.
  const grpc = report.profiles.find((p) => p.name === 'GATEWAY-GRPC');
  if (adapter === 'f5') assert.equal(grpc, undefined, 'BIG-IP claims no GRPCRoute');
  else {
    assert.deepEqual(grpc?.core.statistics, { Passed: 15, Failed: 0, Skipped: 0 });
    assert.equal(grpc?.extended?.result, 'success');
  }
  const brief = (r: typeof report) => r.profiles.map((p) => [p.name, p.core, p.extended]);
  assert.deepEqual(
    brief(committed(adapter)),
    brief(report),
    'docs/conformance is stale: run npm run conformance',
  );
}
