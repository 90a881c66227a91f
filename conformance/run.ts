/**
 * `npm run conformance`: runs the transcribed Gateway API conformance tests against each adapter
 * (a fresh rig per adapter) and writes one upstream-format ConformanceReport per adapter under
 * docs/conformance/. Exits 1 when a test failed, 2 on a bad command line.
 *
 *   npm run conformance -- [--adapter haproxy-runtime ...] [--run-test HTTPRouteWeight ...]
 *                          [--report-dir docs/conformance] [--no-report]
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { z } from 'zod';
import {
  type ConformanceReport,
  GATEWAY_GRPC,
  GATEWAY_HTTP,
  GATEWAY_TLS,
  profileReport,
  renderReport,
} from './harness/report.ts';
import { ADAPTERS, type AdapterName, startRig } from './harness/rig.ts';
import { type ConformanceTest, type Outcome, runTest } from './harness/suite.ts';
import { ALL_TESTS } from './tests/index.ts';

const argsSchema = z.object({
  adapter: z.array(z.enum(ADAPTERS)).default([...ADAPTERS]),
  'run-test': z.array(z.string().min(1)).default([]),
  'report-dir': z.string().min(1).default('docs/conformance'),
  'no-report': z.boolean().default(false),
  'log-level': z.enum(['fatal', 'error', 'warn', 'info', 'debug']).default('warn'),
});
export type RunOptions = z.infer<typeof argsSchema>;

const pkg = z
  .object({ name: z.string(), version: z.string(), homepage: z.string().optional() })
  .parse(JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')));

/** Runs the tests on one adapter; resolves with every outcome and the report. */
export async function runAdapter(
  adapter: AdapterName,
  tests: ConformanceTest[],
  opts: { logLevel?: string; onLog?: (line: string) => void } = {},
): Promise<{ outcomes: Outcome[]; report: ConformanceReport; claimed: string[] }> {
  const rig = await startRig(adapter, { ...(opts.logLevel ? { logLevel: opts.logLevel } : {}) });
  const outcomes: Outcome[] = [];
  const claimed = rig.features;
  const channel = rig.channel;
  try {
    for (const t of tests) {
      const o = await runTest(rig, t, { ...(opts.onLog ? { onLog: opts.onLog } : {}) });
      opts.onLog?.(
        `${o.name}: ${o.result}${'reason' in o ? ` (${o.reason})` : ''}${'ms' in o ? ` in ${o.ms} ms` : ''}`,
      );
      outcomes.push(o);
    }
  } finally {
    await rig.close();
  }
  const report: ConformanceReport = {
    apiVersion: 'gateway.networking.k8s.io/v1',
    kind: 'ConformanceReport',
    date: new Date().toISOString(),
    gatewayAPIVersion: 'v1.6.1',
    gatewayAPIChannel: channel,
    mode: adapter,
    implementation: {
      organization: pkg.name,
      project: pkg.name,
      // What package.json says; the project publishes no repository address yet.
      url: pkg.homepage ?? 'unpublished',
      version: pkg.version,
      contact: pkg.homepage ? [pkg.homepage] : [],
    },
    profiles: [
      GATEWAY_HTTP,
      ...(claimed.includes('TLSRoute') ? [GATEWAY_TLS] : []),
      ...(claimed.includes('GRPCRoute') ? [GATEWAY_GRPC] : []),
    ].map((p) => profileReport(p, tests, outcomes, claimed)),
  };
  return { outcomes, report, claimed };
}

async function main(argv: string[]): Promise<number> {
  let opts: RunOptions;
  try {
    const { values } = parseArgs({
      args: argv,
      options: {
        adapter: { type: 'string', multiple: true },
        'run-test': { type: 'string', multiple: true },
        'report-dir': { type: 'string' },
        'no-report': { type: 'boolean' },
        'log-level': { type: 'string' },
      },
      strict: true,
    });
    opts = argsSchema.parse(values);
    const unknown = opts['run-test'].filter((n) => !ALL_TESTS.some((t) => t.shortName === n));
    if (unknown.length) throw new Error(`no transcribed test named ${unknown.join(', ')}`);
  } catch (err) {
    process.stderr.write(
      `conformance: ${err instanceof z.ZodError ? z.prettifyError(err) : (err as Error).message}\n`,
    );
    return 2;
  }
  const tests = opts['run-test'].length
    ? ALL_TESTS.filter((t) => opts['run-test'].includes(t.shortName))
    : ALL_TESTS;
  let failed = 0;
  for (const adapter of opts.adapter) {
    process.stdout.write(`== ${adapter}: ${tests.length} tests\n`);
    const { outcomes, report } = await runAdapter(adapter, tests, {
      logLevel: opts['log-level'],
      onLog: (l) => process.stdout.write(`   ${l}\n`),
    });
    failed += outcomes.filter((o) => o.result === 'failed').length;
    process.stdout.write(
      `== ${adapter}: ${report.profiles.map((p) => `${p.name}: ${p.summary}`).join(' ')}\n`,
    );
    if (!opts['no-report']) {
      mkdirSync(opts['report-dir'], { recursive: true });
      const file = join(opts['report-dir'], `${adapter}-report.yaml`);
      writeFileSync(file, renderReport(report));
      process.stdout.write(`   written to ${file}\n`);
    }
  }
  return failed ? 1 : 0;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  main(process.argv.slice(2)).then(
    (code) => process.exit(code),
    (err: unknown) => {
      process.stderr.write(`conformance: ${(err as Error).stack ?? String(err)}\n`);
      process.exit(1);
    },
  );
}
