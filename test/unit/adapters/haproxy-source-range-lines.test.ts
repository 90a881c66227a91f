/**
 * Issue 46, item 1: client filters of any length up to the documented caps (1,000
 * loadBalancerSourceRanges, 64 ranges per Ingress) render a configuration `haproxy -c` accepts, on
 * both transports (the runtime file; the Data Plane objects as the API writes them), with no line
 * past HAProxy's 64 words, and every range in the filter's one ACL. Before the fix, 56 and more
 * ranges made one line too long and HAProxy refused the whole frontend.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import fc from 'fast-check';
import { haproxyBinMissing } from '../../support/haproxy.ts';
import { renderConfig } from '../../../adapters/haproxy/config.ts';
import { parseConfig } from '../../../adapters/haproxy/config-parse.ts';
import { frontendFor } from '../../../adapters/haproxy/dataplane/frontend-layout.ts';
import { backendFor } from '../../../adapters/haproxy/dataplane/layout.ts';
import {
  renderConfig as renderDpConfig,
  type DpConfig,
} from '../../../sim/haproxy-dataplane/config-store.ts';
import { MAX_INGRESS_SOURCE_RANGES, MAX_SERVICE_SOURCE_RANGES } from '../../../src/source/cidr.ts';
import type { L4VirtualService, L7VirtualService, Pool } from '../../../src/model/types.ts';

const haproxyMissing = haproxyBinMissing();
const dir = mkdtempSync(join(tmpdir(), 'npl-src-lines-'));
after(() => rmSync(dir, { recursive: true, force: true }));

const POOL = 'c1--team-a-web-http';
const pool: Pool = {
  name: POOL,
  service: 'team-a/web',
  servicePort: 'http',
  protocol: 'TCP',
  health: 'tcp',
  members: [{ address: '127.0.0.1', port: 18080, node: 'n1', pod: 'team-a/web-1', enabled: true }],
};

/** Distinct networks in network form, IPv4 and IPv6 mixed. */
const ranges = (n: number, seed: number): string[] =>
  Array.from({ length: n }, (_, i) =>
    (i + seed) % 3 === 0
      ? `2001:db8:${((i * 7 + seed) % 65536).toString(16)}:${i.toString(16)}::/64`
      : `10.${(i >> 8) % 256}.${i % 256}.0/24`,
  );

function l4(n: number, seed: number): L4VirtualService {
  return {
    kind: 'l4',
    name: 'c1--team-a-web-tcp-18199',
    vip: '127.0.0.10',
    port: 18199,
    protocol: 'TCP',
    pool: POOL,
    source: 'team-a/web',
    sourceRanges: ranges(n, seed),
  };
}

/** A shared Ingress frontend: two tenants' routes, each with its own client filter. */
function l7(a: number, b: number, seed: number): L7VirtualService {
  return {
    kind: 'l7',
    name: 'c1--ingress-http-80',
    vip: '127.0.0.11',
    port: 18198,
    protocol: 'HTTP',
    ingressClass: 'npl-lb',
    defaultPool: '',
    routes: [
      {
        host: 'a.example',
        path: '/',
        pathType: 'Prefix',
        source: 'team-a/web',
        pool: POOL,
        sourceRanges: ranges(a, seed),
      },
      {
        host: 'b.example',
        path: '/',
        pathType: 'Prefix',
        source: 'team-b/web',
        pool: POOL,
        sourceRanges: ranges(b, seed + 1),
      },
    ],
  };
}

function accepted(name: string, text: string): void {
  const file = join(dir, name);
  writeFileSync(file, text);
  try {
    execFileSync('haproxy', ['-c', '-f', file], { stdio: 'pipe' });
  } catch (err) {
    assert.fail(
      `haproxy -c refused ${name}:\n${(err as { stderr?: Buffer }).stderr?.toString().slice(0, 1500)}`,
    );
  }
  const long = text
    .split('\n')
    .find((l) => !l.trimStart().startsWith('#') && l.trim().split(/\s+/).length > 64);
  assert.equal(long, undefined, 'no line of more than 64 words');
}

/** Every range is listed once in the lines of one ACL. */
function listedOnce(text: string, acl: RegExp, want: string[]): void {
  const got = text
    .split('\n')
    .map((l) => l.trim().split(/\s+/))
    .filter((w) => w[0] === 'acl' && acl.test(w[1]!) && w[2] === 'src')
    .flatMap((w) => w.slice(3));
  assert.deepEqual([...got].sort(), [...want].sort());
}

const sizes = fc.record({
  l4: fc.integer({ min: 1, max: MAX_SERVICE_SOURCE_RANGES }),
  a: fc.integer({ min: 1, max: MAX_INGRESS_SOURCE_RANGES }),
  b: fc.integer({ min: 0, max: MAX_INGRESS_SOURCE_RANGES }),
  seed: fc.integer({ min: 0, max: 1000 }),
});
const edges = [
  { l4: MAX_SERVICE_SOURCE_RANGES, a: MAX_INGRESS_SOURCE_RANGES, b: MAX_INGRESS_SOURCE_RANGES, seed: 0 },
  { l4: 61, a: 56, b: 0, seed: 1 },
  { l4: 50, a: 50, b: 51, seed: 2 },
];

describe('client filters of any length on HAProxy', { skip: haproxyMissing }, () => {
  it('runtime transport: haproxy -c accepts the file, every range in one ACL, read back whole', () => {
    fc.assert(
      fc.property(sizes, (s) => {
        const vss = [l4(s.l4, s.seed), l7(s.a, s.b, s.seed)];
        const cfg = renderConfig([pool], vss, [], { owner: 'c1', adminSocket: join(dir, 'rt.sock') });
        accepted('runtime.cfg', cfg);
        const front = (name: string) => cfg.slice(cfg.indexOf(`frontend ${name}`)).split('\n\n')[0]!;
        listedOnce(front(vss[0]!.name), /^npl_src$/, vss[0]!.kind === 'l4' ? vss[0]!.sourceRanges! : []);
        assert.match(front(vss[0]!.name), /tcp-request connection reject unless npl_src\n/);
        const back = parseConfig(cfg, 'c1').owned.virtualServices.find((v) => v.kind === 'l4');
        assert.deepEqual(
          back?.kind === 'l4' ? back.sourceRanges : undefined,
          vss[0]!.kind === 'l4' ? vss[0]!.sourceRanges : [],
        );
      }),
      { numRuns: 12, seed: 46, examples: edges.map((e) => [e]) },
    );
  });

  for (const apiVersion of ['v2', 'v3'] as const)
    it(`Data Plane API ${apiVersion}: haproxy -c accepts what the API writes, every range in one ACL`, () => {
      const o = { owner: 'c1', apiVersion, slots: 2, healthChecks: false, transparentBinds: false };
      fc.assert(
        fc.property(sizes, (s) => {
          const config: DpConfig = {
            backends: new Map([[POOL, { backend: backendFor(pool, true, o), servers: [] }]]),
            frontends: new Map(),
          };
          for (const v of [l4(s.l4, s.seed), l7(s.a, s.b, s.seed)]) {
            const f = frontendFor(v, o);
            config.frontends.set(v.name, { ...f });
          }
          const text = renderDpConfig(config, {
            adminSocket: join(dir, 'dp.sock'),
            serverStateFile: join(dir, 'state'),
          });
          accepted(`dp-${apiVersion}.cfg`, text);
          listedOnce(text, /^npl_src$/, l4(s.l4, s.seed).sourceRanges!);
          listedOnce(text, /^r\d+_src$/, [...ranges(s.a, s.seed), ...ranges(s.b, s.seed + 1)]);
        }),
        { numRuns: 8, seed: 47, examples: edges.map((e) => [e]) },
      );
    });
});
