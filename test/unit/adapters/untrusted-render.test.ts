/**
 * Untrusted strings through every renderer, bypassing the model's checks on purpose: whatever a
 * host or path holds, HAProxy's configuration (both transports) holds exactly the intended rules,
 * each value as one quoted argument that decodes back to itself, and `haproxy -c` agrees; Avi's
 * and AS3's objects carry the value as JSON data, unchanged, and still validate.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { haproxyBinMissing } from '../../support/haproxy.ts';
import { invalid as aviInvalid } from '../../../adapters/avi/object-schemas.ts';
import { renderVirtualService as aviRender } from '../../../adapters/avi/vs-objects.ts';
import { renderVirtualService as f5Render, renderPool as f5Pool } from '../../../adapters/f5/declaration.ts';
import { validateAs3 } from '../../../adapters/f5/as3-validate.ts';
import { renderConfig, routeMatchers } from '../../../adapters/haproxy/config.ts';
import { parseConfig } from '../../../adapters/haproxy/config-parse.ts';
import { frontendFor } from '../../../adapters/haproxy/dataplane/frontend-layout.ts';
import { unquoteArg } from '../../../adapters/haproxy/encode.ts';
import type { HttpRoute, L7VirtualService, Pool } from '../../../src/model/types.ts';

/** Strings an attacker would try, mixed with arbitrary ones (any code point, control characters). */
const hostile = fc
  .oneof(
    fc.string({ unit: 'binary', maxLength: 40 }),
    fc.string({ unit: 'grapheme-ascii', maxLength: 40 }),
    fc
      .array(
        fc.constantFrom(
          '/a',
          '\n',
          '\r\n',
          ' ',
          '\t',
          '"',
          "'",
          '\\',
          '#',
          '${HOME}',
          '$',
          '%0a',
          'http-request return status 200 content-type text/plain string pwned',
          'use_backend other-team',
          '    acl x always_true',
          ' if TRUE',
        ),
        { maxLength: 8 },
      )
      .map((xs) => xs.join('')),
  )
  .filter((s) => !s.includes('\u0000'));

const routeArb = fc.record({
  host: fc.oneof(fc.constant(''), fc.constant('*.a.example'), hostile),
  path: hostile.map((p) => (p.startsWith('/') ? p : `/${p}`)),
  pathType: fc.constantFrom('Prefix', 'Exact', 'ImplementationSpecific') as fc.Arbitrary<
    HttpRoute['pathType']
  >,
});

const pool: Pool = {
  name: 'c1--default-web-http.l7',
  protocol: 'TCP',
  health: 'http',
  service: 'default/web',
  servicePort: 'http',
  members: [{ address: '127.0.0.1', port: 18080, node: 'n1', pod: 'default/web-1', enabled: true }],
};
const vsOf = (routes: Omit<HttpRoute, 'pool' | 'source'>[]): L7VirtualService => ({
  kind: 'l7',
  name: 'c1--ingress-npl',
  vip: '127.0.0.1',
  port: 18081,
  ingressClass: 'npl',
  defaultPool: undefined,
  routes: routes.map((r) => ({ ...r, pool: pool.name, source: 'team-a/ing' })),
});

/** The lines HAProxy's L7 frontend of ours may hold; anything else is an injection. */
const ALLOWED = [
  /^frontend c1--ingress-npl$/,
  /^ {4}# npl-lb [^\s].*$/,
  /^ {4}mode http$/,
  /^ {4}bind 127\.0\.0\.1:18081$/,
  /^ {4}acl r\d+_(host|path) (hdr\(host\)|path) -m (reg -i|str|beg) ("[^"\s\\$#']*(\\x[0-9a-f]{2}[^"\s\\$#']*)*"|\/)$/,
  /^ {4}use_backend c1--default-web-http\.l7 if (r\d+_host )?r\d+_path$/,
  /^$/,
];

/** Every ACL of a frontend's text, decoded: [name, criterion, flags, value]. */
function aclsOf(lines: string[]): string[][] {
  return lines
    .filter((l) => l.startsWith('    acl '))
    .map((l) => {
      const m = /^ {4}acl (\S+) (\S+) (-m (?:reg -i|str|beg)) (.*)$/.exec(l)!;
      return [m[1]!, m[2]!, m[3]!, unquoteArg(m[4]!)];
    });
}

function checkHaproxyFrontend(text: string, vs: L7VirtualService): void {
  const section = text.slice(text.indexOf('frontend c1--ingress-npl')).split('\n');
  for (const line of section) {
    assert.ok(
      ALLOWED.some((re) => re.test(line)),
      `unexpected line in the frontend: ${JSON.stringify(line)}`,
    );
  }
  const matchers = routeMatchers(vs.routes);
  const want = matchers.flatMap((m) => m.acls.map((a) => [a.name, a.criterion, a.value]));
  const got = aclsOf(section);
  assert.equal(got.length, want.length, 'exactly the intended ACLs');
  assert.equal(
    section.filter((l) => l.startsWith('    use_backend ')).length,
    vs.routes.length,
    'one rule a route',
  );
  // Each ACL's value decodes to exactly what the route asked for.
  matchers.forEach((m) => {
    const mine = got.filter((g) => g[0]!.startsWith(`r${m.index}_`));
    const path = mine.filter((g) => g[1] === 'path').map((g) => g[3]);
    const p = m.route.path.replace(/\/+$/, '');
    if (m.route.pathType === 'Exact') assert.deepEqual(path, [m.route.path]);
    else if (m.route.path === '/') assert.deepEqual(path, ['/']);
    else assert.deepEqual(path, [p, `${p}/`]);
  });
}

const haproxyMissing = haproxyBinMissing();

describe('untrusted hosts and paths reach no renderer raw', () => {
  it('runtime transport: the file holds exactly the intended rules and reads back the same routes', () => {
    fc.assert(
      fc.property(fc.array(routeArb, { minLength: 1, maxLength: 4 }), (routes) => {
        const vs = vsOf(routes);
        const text = renderConfig([pool], [vs], [], { owner: 'c1', adminSocket: '/tmp/x.sock' });
        checkHaproxyFrontend(text, vs);
        const back = parseConfig(text, 'c1').owned.virtualServices[0] as L7VirtualService;
        assert.deepEqual(
          new Set(back.routes.map((r) => JSON.stringify([r.host, r.path, r.pathType]))),
          new Set(vs.routes.map((r) => JSON.stringify([r.host, r.path, r.pathType]))),
        );
      }),
      { numRuns: 300 },
    );
  });

  it('Data Plane API transport: every ACL value is one quoted argument that decodes to the route', () => {
    fc.assert(
      fc.property(fc.array(routeArb, { minLength: 1, maxLength: 4 }), (routes) => {
        const vs = vsOf(routes);
        const layout = frontendFor(vs, {
          owner: 'c1',
          apiVersion: 'v3',
          slots: 4,
          healthChecks: false,
          transparentBinds: false,
        });
        // The Data Plane API writes `acl <name> <criterion> <value>` into the file verbatim.
        const lines = [
          'frontend c1--ingress-npl',
          ...layout.acls.map((a) => `    acl ${a.acl_name} ${a.criterion} ${a.value}`),
          ...layout.rules.map((r) => `    use_backend ${r.name} if ${r.cond_test}`),
        ];
        checkHaproxyFrontend(lines.join('\n'), vs);
        assert.ok(!/[\n\r]/.test(layout.frontend.description ?? ''), 'description is one line');
        assert.ok(
          !/\s/.test((layout.frontend.description ?? '').replace(/^npl-lb l7 /, '').replace(/ /g, '')),
        );
      }),
      { numRuns: 300 },
    );
  });

  it('haproxy -c accepts every generated configuration', { skip: haproxyMissing }, () => {
    const dir = mkdtempSync(join(tmpdir(), 'npl-encode-'));
    try {
      const samples = fc.sample(fc.array(routeArb, { minLength: 1, maxLength: 6 }), {
        numRuns: 40,
        seed: 42,
      });
      // One file with many frontends keeps this to one haproxy -c per 10 samples.
      for (let i = 0; i < samples.length; i += 10) {
        const vss = samples.slice(i, i + 10).map((routes, j) => ({
          ...vsOf(routes),
          name: `c1--ingress-n${j}`,
          port: 18100 + j,
        }));
        const file = join(dir, `h${i}.cfg`);
        writeFileSync(
          file,
          renderConfig([pool], vss, [], {
            owner: 'c1',
            adminSocket: join(dir, 'a.sock'),
            socketGroup: 994 + i,
          }),
        );
        execFileSync('haproxy', ['-c', '-q', '-f', file], { stdio: 'pipe' });
        // (The admin socket's group, for a controller that does not run as root, is valid too.)
        assert.match(
          readFileSync(file, 'utf8'),
          new RegExp(`stats socket \\S+ mode 660 gid ${994 + i} level admin`),
        );
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('Avi: hosts and paths are JSON data, unchanged, and the objects still match the object model', () => {
    fc.assert(
      fc.property(fc.array(routeArb, { minLength: 1, maxLength: 4 }), (routes) => {
        const vs = vsOf(routes);
        const { children, services } = aviRender(vs, 'c1', {
          cloud: 'Default-Cloud',
          seGroup: 'Default-Group',
          vrf: 'global',
        });
        const policy = children.find((o) => o.type === 'httppolicyset')!.object as unknown as {
          http_request_policy: {
            rules: { match: { host_hdr?: { value: string[] }; path?: { match_str: string[] } } }[];
          };
        };
        const seen = new Set(
          policy.http_request_policy.rules.map((r) =>
            JSON.stringify([r.match.host_hdr?.value[0] ?? '', r.match.path?.match_str[0] ?? '']),
          ),
        );
        // Each route's host and path reach the rules as they were (a prefix as itself and with '/').
        for (const r of vs.routes) {
          const host = r.host.startsWith('*.') ? r.host.slice(1) : r.host;
          const prefix = r.path.replace(/\/+$/, '');
          const paths = r.pathType === 'Exact' ? [r.path] : prefix === '' ? [''] : [prefix, `${prefix}/`];
          for (const path of paths) assert.ok(seen.has(JSON.stringify([host, path])), `${host} ${path}`);
        }
        for (const o of children) assert.deepEqual(aviInvalid(o.type, o.object), []);
        for (const o of services) assert.deepEqual(aviInvalid('virtualservice', o), []);
      }),
      { numRuns: 200 },
    );
  });

  it('F5 AS3: hosts and paths are JSON data, unchanged, in a declaration the AS3 schema accepts', () => {
    fc.assert(
      fc.property(fc.array(routeArb, { minLength: 1, maxLength: 3 }), (routes) => {
        const vs = vsOf(routes);
        const objects = f5Render(vs, 'c1');
        const text = JSON.stringify(objects);
        const values: string[] = [];
        JSON.parse(text, (k, v: unknown) => {
          if (k === 'values' && Array.isArray(v)) values.push(...(v as string[]));
          return v;
        });
        // Carried as they are: a path (a prefix as itself and with '/'; the prefix '/' takes any
        // path and needs no value), a host (a wildcard as its suffix).
        for (const r of vs.routes) {
          const prefix = r.path.replace(/\/+$/, '');
          const paths = r.pathType === 'Exact' ? [r.path] : prefix === '' ? [] : [prefix, `${prefix}/`];
          for (const p of paths) assert.ok(values.includes(p), `path ${JSON.stringify(p)} carried as it is`);
          if (r.host) assert.ok(values.includes(r.host.startsWith('*.') ? r.host.slice(1) : r.host));
        }
        const body = {
          class: 'ADC',
          schemaVersion: '3.56.0',
          id: 'npl-lb-c1',
          npl_lb_c1: {
            class: 'Tenant',
            npl_lb: {
              class: 'Application',
              template: 'generic',
              [pool.name]: f5Pool(pool, 'c1'),
              ...objects,
            },
          },
        };
        assert.deepEqual(validateAs3(body), []);
      }),
      { numRuns: 60 },
    );
  });
});
