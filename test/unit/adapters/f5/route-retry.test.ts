/**
 * A route's retries on BIG-IP (route-retry.ts). The iRule is run for real in a Tcl interpreter
 * (tclsh, with BIG-IP's commands stood in for: the pool that answered, the status, the request's
 * head and headers, HTTP::retry) and sends a request again exactly as the rule's statuses and
 * attempts say, never one with a body, with the count restarting for the next request on the
 * connection. Through the adapter and the AS3 simulator (both layouts): written, observed back,
 * changed in place, taken off; a weighted rule's pool of all its backends; an arm edited by hand,
 * the rule taken off or its text mangled: written again; a pool path with Tcl syntax never written;
 * and the source refuses what BIG-IP cannot do (a backoff) by name.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { describe, it } from 'node:test';
import { F5_CAPABILITIES } from '../../../../adapters/f5/capabilities.ts';
import { parseRetryRule, retryRule, retryRuleName } from '../../../../adapters/f5/route-retry.ts';
import type { HttpRoute, L7VirtualService, LbState, Pool } from '../../../../src/model/types.ts';
import { plan } from '../../../../src/plan/diff.ts';
import { ruleRetry } from '../../../../src/source/gateway/rule-retry.ts';
import { converge } from '../../../support/converge.ts';
import { startF5 } from '../../../support/f5-sim.ts';

type Json = Record<string, unknown>;

const tclsh = spawnSync('tclsh', [], { input: 'puts ok' }).stdout?.toString().trim() === 'ok';

/** One request through the rule: the statuses the members would answer, in turn. */
interface Exchange {
  pool: string;
  answers: number[];
  body?: boolean;
}

/**
 * Runs the iRule's events in tclsh for requests on one connection: returns, per request, how many
 * times it was sent and the status passed to the client.
 */
function runRule(rule: string, exchanges: Exchange[]): { sent: number; status: number }[] {
  const script = [
    'proc when {event body} { set ::events($event) $body }',
    'namespace eval HTTP {}',
    'namespace eval LB {}',
    'proc HTTP::header {op {name ""}} {',
    '  if {$op eq "exists"} { return [dict exists $::headers $name] }',
    '  return [dict get $::headers $op]',
    '}',
    'proc HTTP::request {} { return "GET / HTTP/1.1\\r\\nHost: a\\r\\n\\r\\n" }',
    'proc HTTP::status {} { return [lindex $::answers $::sent-1] }',
    'proc HTTP::retry {r} { set ::retried 1 }',
    'proc LB::server {what} { return $::pool }',
    rule,
    'uplevel #0 $::events(CLIENT_ACCEPTED)',
    ...exchanges.flatMap((e) => [
      `set ::pool {${e.pool}}`,
      `set ::answers {${e.answers.join(' ')}}`,
      `set ::headers ${e.body ? '{Content-Length 5}' : '{}'}`,
      'uplevel #0 $::events(HTTP_REQUEST)',
      'set ::sent 0',
      'while 1 {',
      '  incr ::sent',
      '  set ::retried 0',
      '  uplevel #0 $::events(HTTP_RESPONSE)',
      '  if {!$::retried} break',
      '}',
      'puts "$::sent [HTTP::status]"',
    ]),
  ].join('\n');
  // Read from stdin, tclsh would go on after an error: caught, it stops and fails the test.
  const r = spawnSync('tclsh', [], {
    input: `if {[catch {\n${script}\n} err]} { puts stderr $err; exit 1 }\n`,
  });
  assert.equal(r.status, 0, r.stderr.toString());
  return r.stdout
    .toString()
    .trim()
    .split('\n')
    .map((l) => {
      const [sent, status] = l.split(' ').map(Number);
      return { sent: sent!, status: status! };
    });
}

const pool = (name: string, extra: Partial<Pool> = {}): Pool => ({
  name,
  protocol: 'TCP',
  health: 'http',
  service: 'default/web',
  servicePort: '80',
  members: [
    { address: '192.0.2.1', port: 61000, node: 'n1', pod: 'default/web-0', enabled: true },
    { address: '192.0.2.2', port: 61001, node: 'n2', pod: 'default/web-1', enabled: true },
  ],
  ...extra,
});

const RETRY = 'c1--default-web-80.l7.retry-0a1b2c3d';
const PLAIN = 'c1--default-web-80.l7';
const OTHER = 'c1--default-api-80.l7.retry-9f8e7d6c';
const VS = 'c1--gw-default.gw-HTTP-80';

const vs = (routes: HttpRoute[]): L7VirtualService => ({
  kind: 'l7',
  name: VS,
  vip: '192.0.2.20',
  port: 80,
  ingressClass: 'npl-lb',
  defaultPool: undefined,
  routes,
});
const route = (path: string, p: string): HttpRoute => ({
  host: 'a.example.com',
  path,
  pathType: 'Prefix',
  pool: p,
  source: `default/r${path}`,
});

const PATHS = { pool: (p: string) => `/t/a/${p}`, own: (p: string) => `/t/a/${p}` };

describe('BIG-IP: route retries', () => {
  it(
    'the rule, run in Tcl, sends again only on the statuses and as many times as its pool asks',
    { skip: tclsh ? false : 'tclsh is not installed (Debian package tcl)' },
    () => {
      const pools = new Map([
        [RETRY, pool(RETRY, { retries: 2, retryStatuses: [500, 503] })],
        [OTHER, pool(OTHER, { retryStatuses: [502] })],
        [PLAIN, pool(PLAIN)],
      ]);
      const rule = retryRule(
        vs([route('/a', RETRY), route('/b', OTHER), route('/c', PLAIN)]),
        pools,
        new Map(),
        PATHS,
      )!;
      const [r, o, p] = [RETRY, OTHER, PLAIN].map((n) => `/t/a/${n}`) as [string, string, string];
      assert.deepEqual(
        runRule(rule, [
          { pool: r, answers: [500, 503, 200] }, // two retries, then the answer
          { pool: r, answers: [500, 500, 500, 200] }, // attempts spent: the third 500 is passed on
          { pool: r, answers: [404, 200] }, // not a status it names
          { pool: r, answers: [500, 200], body: true }, // a body is never sent again
          { pool: r, answers: [503, 200] }, // the count restarted with the last answer
          { pool: o, answers: [502, 502, 502, 502, 200] }, // no attempts named: 3
          { pool: o, answers: [500, 200] },
          { pool: p, answers: [500, 200] }, // a pool without retries
          { pool: '/t/a/someone-elses', answers: [503, 200] },
        ]),
        [
          { sent: 3, status: 200 },
          { sent: 3, status: 500 },
          { sent: 1, status: 404 },
          { sent: 1, status: 500 },
          { sent: 2, status: 200 },
          { sent: 4, status: 502 },
          { sent: 1, status: 500 },
          { sent: 1, status: 500 },
          { sent: 1, status: 503 },
        ],
      );
      // A rule of connection retries alone (no status): its arm is written and sends nothing again.
      const none = retryRule(
        vs([route('/', RETRY)]),
        new Map([[RETRY, pool(RETRY, { retryStatuses: [] })]]),
        new Map(),
        PATHS,
      )!;
      assert.deepEqual(runRule(none, [{ pool: `/t/a/${RETRY}`, answers: [500, 200] }]), [
        { sent: 1, status: 500 },
      ]);
    },
  );

  it('reads its own text back, and nothing else', () => {
    const pools = new Map([
      [RETRY, pool(RETRY, { retries: 2, retryStatuses: [500, 503] })],
      [OTHER, pool(OTHER, { retries: 2, retryStatuses: [500, 503] })],
    ]);
    const rule = retryRule(vs([route('/a', RETRY), route('/b', OTHER)]), pools, new Map(), PATHS)!;
    // Pools that ask alike share an arm.
    assert.match(rule, new RegExp(`"/t/a/${OTHER.replace(/\./g, '\\.')}" -\\n`));
    assert.deepEqual(
      parseRetryRule(rule),
      new Map([
        [`/t/a/${OTHER}`, { attempts: 2, statuses: [500, 503] }],
        [`/t/a/${RETRY}`, { attempts: 2, statuses: [500, 503] }],
      ]),
    );
    for (const mangled of [
      rule.replace('    HTTP::retry $npl_retry_req\n', ''),
      rule.replace('set npl_retry_codes {500 503}', 'set npl_retry_codes {500 503}; exec rm -rf /'),
      rule.replace(`"/t/a/${RETRY}" { set`, `"/t/a/${RETRY}" -\n    default { set`),
      rule.replace(`    "/t/a/${RETRY}" { set npl_retry_max 2; set npl_retry_codes {500 503} }\n`, ''),
      '',
    ]) {
      assert.notEqual(mangled, rule);
      assert.equal(parseRetryRule(mangled), undefined, mangled);
    }
  });

  it('a path or status with Tcl syntax is never written', () => {
    const pools = new Map([[RETRY, pool(RETRY, { retryStatuses: [500] })]]);
    for (const bad of ['/t/a/x" { exec }', '/t/a/[exec]', 't/a/relative'])
      assert.throws(
        () => retryRule(vs([route('/', RETRY)]), pools, new Map(), { pool: () => bad, own: () => bad }),
        /not a BIG-IP path/,
      );
    const odd = new Map([[RETRY, pool(RETRY, { retryStatuses: [500.5] })]]);
    assert.throws(() => retryRule(vs([route('/', RETRY)]), odd, new Map(), PATHS), /not a status/);
  });

  it('the source takes any status of 400-599 and 10 attempts for BIG-IP, and refuses a backoff by name', () => {
    const lb = { retry: F5_CAPABILITIES.http?.retry, adapter: 'f5' };
    assert.deepEqual(ruleRetry({ codes: [503, 429, 500], attempts: 10 }, undefined, 'rules[0].retry', lb), {
      statuses: [429, 500, 503],
      attempts: 10,
    });
    assert.throws(
      () => ruleRetry({ codes: [500], attempts: 11 }, undefined, 'rules[0].retry', lb),
      /at most 10, not 11/,
    );
    assert.throws(
      () => ruleRetry({ codes: [500], backoff: '1s' }, undefined, 'rules[0].retry', lb),
      /retry\.backoff: the f5 load balancer sends a request again at once/,
    );
    assert.throws(
      () => ruleRetry({ codes: [302] }, undefined, 'rules[0].retry', lb),
      /not a status of 400-599/,
    );
  });

  for (const version of ['3.56.0', '3.46.0']) {
    it(`through the adapter on AS3 ${version}: written, read back, changed in place, taken off; hand edits written again`, async (t) => {
      const { sim, adapter, objects } = await startF5(t, version);
      const rule = retryRuleName(VS);
      const want = (retry: Partial<Pool>, split = false): LbState => ({
        pools: [pool(RETRY, retry), pool(OTHER, retry), pool(PLAIN)],
        virtualServices: [
          vs([
            route('/a', RETRY),
            split
              ? {
                  ...route('/b', ''),
                  backends: [
                    { pool: OTHER, weight: 1 },
                    { pool: RETRY, weight: 1 },
                  ],
                }
              : route('/b', PLAIN),
          ]),
        ],
      });
      const arm = (name: string) =>
        String(objects()[rule]?.iRule ?? '')
          .split('\n')
          .find((l) => l.includes(`/${name}"`));

      await converge(adapter, want({ retries: 2, retryStatuses: [500, 503] }));
      assert.ok((objects()[VS]!.iRules as unknown[]).some((r) => String(r).endsWith(rule)));
      assert.match(arm(RETRY) ?? '', /\{ set npl_retry_max 2; set npl_retry_codes \{500 503\} \}$/);
      assert.equal(arm(PLAIN), undefined, 'a pool without retries has no arm');
      assert.equal(objects()[RETRY]!.reselectTries, 2);

      // Changed in place: other statuses and attempts.
      await converge(adapter, want({ retries: 1, retryStatuses: [502] }));
      assert.match(arm(RETRY) ?? '', /set npl_retry_max 1; set npl_retry_codes \{502\}/);

      // A weighted rule: its pool of all its backends' members is the one that answers.
      await converge(adapter, want({ retries: 1, retryStatuses: [502] }, true));
      assert.match(arm(`${VS}_w1`) ?? '', /set npl_retry_max 1; set npl_retry_codes \{502\}/);

      // By hand: the arm of the split edited, then the rule's text mangled; each written again.
      const tenant = () => Object.values(sim.tenants.get('npl_lb_c1')!) as Json[];
      const editRule = (f: (text: string) => string) => {
        for (const app of tenant()) {
          const o = app?.[rule] as Json | undefined;
          if (o) o.iRule = f(String(o.iRule));
        }
      };
      const state = want({ retries: 1, retryStatuses: [502] }, true);
      editRule((s) => s.replace(/set npl_retry_codes \{502\}/g, 'set npl_retry_codes {}'));
      assert.notDeepEqual(plan(state, await adapter.observe()).changes, [], 'the hand edit is seen');
      await converge(adapter, state);
      assert.match(arm(`${VS}_w1`) ?? '', /set npl_retry_codes \{502\}/);
      editRule((s) => s.replace('    HTTP::retry $npl_retry_req\n', ''));
      await converge(adapter, state);
      assert.match(String(objects()[rule]!.iRule), /HTTP::retry \$npl_retry_req/);

      // Taken off: the rule leaves the service and the tenant.
      await converge(adapter, want({}));
      assert.equal(objects()[rule], undefined);
      assert.ok(
        !((objects()[VS]!.iRules as unknown[] | undefined) ?? []).some((r) => String(r).endsWith(rule)),
      );
    });
  }
});
