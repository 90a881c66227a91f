/**
 * Issue 30, item 1: no byte of user data is syntax in haproxy.cfg, on either transport. Arbitrary
 * Unicode strings go through every string field of every route kind (Gateway API HTTP routes:
 * host, path of each type, header and query match values, header modifier names and values,
 * redirect and rewrite hostnames and paths, the source; TLS passthrough hosts and sources; the
 * Service and port a pool stands for, a member's node and Pod). The file each transport writes is
 * accepted by `haproxy -c`, and what each transport reads back is exactly what was written: the
 * runtime transport parses its own file, the Data Plane transport its objects, whose descriptions
 * the API writes into the file verbatim (as the real one does, so a `'` left raw there breaks it).
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
import { pct } from '../../../adapters/haproxy/encode.ts';
import { frontendFor, readVirtualService } from '../../../adapters/haproxy/dataplane/frontend-layout.ts';
import { backendFor, readPool } from '../../../adapters/haproxy/dataplane/layout.ts';
import {
  renderConfig as renderDpConfig,
  type DpConfig,
} from '../../../sim/haproxy-dataplane/config-store.ts';
import type {
  HttpRoute,
  L4VirtualService,
  L7VirtualService,
  Pool,
  VirtualService,
} from '../../../src/model/types.ts';

const haproxyMissing = haproxyBinMissing();

/** Any Unicode text but NUL (which the model refuses), with the characters attackers reach for. */
const text = fc
  .oneof(
    fc.string({ unit: 'binary', maxLength: 24 }),
    fc
      .array(
        fc.constantFrom(
          "it's",
          '"',
          '\\',
          '#',
          '$HOME',
          '${X}',
          '%',
          '%[src]',
          ' ',
          '!',
          '*',
          '(',
          ')',
          '~',
          '\n',
          'é',
          '😀',
          ' if TRUE',
        ),
        {
          maxLength: 6,
        },
      )
      .map((xs) => xs.join('')),
  )
  .filter((s) => !s.includes('\u0000'));
const nonEmpty = text.filter((s) => s.length > 0);
const path = text.map((p) => `/${p}`);
/** Header names as the Gateway API allows them (its tchar set): quoted like any value. */
const headerName = fc.stringMatching(/^[A-Za-z0-9!#$%&'*+.^_`|~-]{1,12}$/);
/** Names read inside a fetch's parentheses: HAProxy's token set (the core refuses any other). */
const fetchName = fc.stringMatching(/^[A-Za-z0-9_-]{1,12}$/);
const valueMatch = fc.record({
  name: fetchName,
  value: text,
  type: fc.constant('Exact' as const),
});
const modifier = fc.record({
  set: fc.array(fc.record({ name: headerName, value: text }), { maxLength: 2 }),
  add: fc.array(fc.record({ name: headerName, value: text }), { maxLength: 2 }),
  remove: fc.array(headerName, { maxLength: 2 }),
});
const pathModifier = fc.oneof(
  fc.record({ type: fc.constant('ReplaceFullPath' as const), value: path }),
  fc.record({ type: fc.constant('ReplacePrefixMatch' as const), value: path }),
);
const POOL = 'c1--team-a-web-http';

const route = fc
  .record({
    host: fc.oneof(fc.constant(''), fc.constant('*.a.example'), nonEmpty),
    path,
    pathType: fc.constantFrom('Prefix', 'Exact') as fc.Arbitrary<HttpRoute['pathType']>,
    source: text.map((s) => `HTTPRoute team-a/${s}`),
    headers: fc.array(valueMatch, { maxLength: 2 }),
    queryParams: fc.array(valueMatch, { maxLength: 2 }),
    method: fc.option(fc.constantFrom('GET', 'POST'), { nil: undefined }),
    requestHeaders: fc.option(modifier, { nil: undefined }),
    responseHeaders: fc.option(modifier, { nil: undefined }),
    end: fc.oneof(
      fc.record({ kind: fc.constant('pool' as const) }),
      fc.record({
        kind: fc.constant('redirect' as const),
        hostname: fc.option(nonEmpty, { nil: undefined }),
        path: fc.option(pathModifier, { nil: undefined }),
      }),
      fc.record({
        kind: fc.constant('rewrite' as const),
        hostname: fc.option(nonEmpty, { nil: undefined }),
        path: fc.option(pathModifier, { nil: undefined }),
      }),
    ),
  })
  .map(({ end, headers, queryParams, method, requestHeaders, responseHeaders, ...r }): HttpRoute => {
    // ReplacePrefixMatch goes with a prefix match only (the Gateway API's CEL rule).
    if (r.pathType === 'Exact' && end.kind !== 'pool' && end.path?.type === 'ReplacePrefixMatch')
      end = { ...end, path: { ...end.path, type: 'ReplaceFullPath' } };
    const out: HttpRoute = {
      ...r,
      pool: end.kind === 'redirect' ? '' : POOL,
      ...(headers.length ? { headers } : {}),
      ...(queryParams.length ? { queryParams } : {}),
      ...(method ? { method } : {}),
      ...(requestHeaders ? { requestHeaders } : {}),
      ...(responseHeaders ? { responseHeaders } : {}),
    };
    if (end.kind === 'redirect') {
      out.redirect = {
        statusCode: 302,
        ...(end.hostname !== undefined ? { hostname: end.hostname } : {}),
        ...(end.path ? { path: end.path } : {}),
      };
    }
    if (end.kind === 'rewrite' && (end.hostname !== undefined || end.path)) {
      out.rewrite = {
        ...(end.hostname !== undefined ? { hostname: end.hostname } : {}),
        ...(end.path ? { path: end.path } : {}),
      };
    }
    return out;
  });

const pool = fc.record({ service: text, servicePort: text, node: text, pod: text }).map((p): Pool => ({
  name: POOL,
  protocol: 'TCP',
  health: 'http',
  service: p.service,
  servicePort: p.servicePort,
  members: [{ address: '127.0.0.1', port: 18080, node: p.node, pod: p.pod, enabled: true }],
}));

const sample = fc.record({
  pool,
  routes: fc.array(route, { minLength: 1, maxLength: 4 }),
  sni: fc.array(fc.record({ host: nonEmpty, source: text }), { minLength: 1, maxLength: 3 }),
});
type Sample = typeof sample extends fc.Arbitrary<infer T> ? T : never;

function virtualServices(s: Sample, i: number): VirtualService[] {
  const l7: L7VirtualService = {
    kind: 'l7',
    name: `c1--gw-${i}-http`,
    vip: '127.0.0.1',
    port: 18200 + 2 * i,
    ingressClass: '',
    defaultPool: undefined,
    routes: s.routes.map((r, order) => ({ ...r, order })),
  };
  const hosts = new Set<string>();
  const l4: L4VirtualService = {
    kind: 'l4',
    name: `c1--gw-${i}-tls`,
    vip: '127.0.0.1',
    port: 18201 + 2 * i,
    protocol: 'TCP',
    pool: '',
    source: `Gateway team-a/${s.sni[0]!.source}`,
    sni: s.sni
      .filter((r) => !hosts.has(r.host) && hosts.add(r.host))
      .map((r) => ({ host: r.host, pool: POOL, source: `TLSRoute team-a/${r.source}` })),
  };
  return [l7, l4];
}

const routeSet = (routes: HttpRoute[]) =>
  new Set(routes.map((r) => JSON.stringify(r, Object.keys(r).sort())));
const normal = (v: VirtualService): unknown =>
  v.kind === 'l7'
    ? { ...v, routes: routeSet(v.routes) }
    : { ...v, sni: new Set(v.sni?.map((r) => JSON.stringify(r))) };

const dir = mkdtempSync(join(tmpdir(), 'npl-encode-prop-'));
after(() => rmSync(dir, { recursive: true, force: true }));

function check(file: string, text: string): void {
  writeFileSync(file, text);
  try {
    execFileSync('haproxy', ['-c', '-f', file], { stdio: 'pipe' });
  } catch (err) {
    const out = `${(err as { stderr?: Buffer }).stderr?.toString() ?? ''}`;
    assert.fail(`haproxy -c refused ${file}:\n${out.slice(0, 2000)}`);
  }
}

describe('HAProxy encoding: arbitrary Unicode in every route field is data, never syntax', () => {
  it('pct leaves only [A-Za-z0-9._-] and decodes back', () => {
    fc.assert(
      fc.property(text, (s) => {
        assert.match(pct(s), /^[A-Za-z0-9._%-]*$/);
        assert.equal(decodeURIComponent(pct(s)), s);
      }),
      { numRuns: 500 },
    );
    assert.equal(pct("it's (a) ~test!*"), 'it%27s%20%28a%29%20%7Etest%21%2A');
  });

  it(
    'runtime transport: haproxy -c accepts the file and it reads back the same objects',
    { skip: haproxyMissing },
    () => {
      fc.assert(
        fc.property(sample, (s) => {
          const vss = virtualServices(s, 0);
          const cfg = renderConfig([s.pool], vss, [], { owner: 'c1', adminSocket: join(dir, 'rt.sock') });
          check(join(dir, 'runtime.cfg'), cfg);
          const back = parseConfig(cfg, 'c1').owned;
          assert.deepEqual(back.pools, [s.pool]);
          assert.deepEqual(
            back.virtualServices
              .map(normal)
              .sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b))),
            vss.map(normal).sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b))),
          );
        }),
        { numRuns: 40, seed: 30, includeErrorInReport: true },
      );
    },
  );

  for (const apiVersion of ['v2', 'v3'] as const) {
    it(
      `Data Plane API ${apiVersion}: haproxy -c accepts what the API writes verbatim, and the objects read back`,
      { skip: haproxyMissing },
      () => {
        const o = { owner: 'c1', apiVersion, slots: 2, healthChecks: true, transparentBinds: false };
        fc.assert(
          fc.property(sample, (s) => {
            const vss = virtualServices(s, 0);
            const backend = backendFor(s.pool, true, o);
            const servers = [
              {
                name: 's1',
                address: '127.0.0.1',
                port: 18080,
                check: 'enabled' as const,
                ...(apiVersion === 'v3'
                  ? { metadata: { npl_lb: { node: s.pool.members[0]!.node, pod: s.pool.members[0]!.pod } } }
                  : {}),
              },
            ];
            const config: DpConfig = {
              backends: new Map([[POOL, { backend, servers }]]),
              frontends: new Map(),
            };
            for (const v of vss) {
              const f = frontendFor(v, o);
              config.frontends.set(v.name, {
                frontend: f.frontend,
                binds: f.binds,
                acls: f.acls,
                rules: f.rules,
                httpRequest: f.httpRequest,
                httpResponse: f.httpResponse,
                tcpRequest: f.tcpRequest,
              });
              assert.deepEqual(
                normal(readVirtualService({ frontend: f.frontend, binds: f.binds })),
                normal(v),
              );
            }
            const back = readPool({ backend, servers: [], known: new Map() });
            assert.equal(back.service, s.pool.service);
            assert.equal(back.servicePort, s.pool.servicePort);
            check(
              join(dir, `dp-${apiVersion}.cfg`),
              renderDpConfig(config, {
                adminSocket: join(dir, 'dp.sock'),
                serverStateFile: join(dir, 'state'),
              }),
            );
          }),
          { numRuns: 40, seed: 31, includeErrorInReport: true },
        );
      },
    );
  }
});
