/**
 * A check's headers and statuses on the Data Plane API transport (issue 33 item 5): the adapter
 * writes them as the backend's http_checks (a `send` with each header's name and log-format value,
 * an `expect status` list), and the simulator, written from the http_check model, renders each as
 * its haproxy.cfg line and refuses what it cannot write (a type it does not serve, an expect
 * without a pattern) rather than dropping it. SourceIP persistence likewise: the backend's
 * stick_table and a `stick on src` rule in its stick_rules.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { backendFor, httpChecksFor, stickRulesFor } from '../../../adapters/haproxy/dataplane/layout.ts';
import { httpCheckLine, RuleRefused, stickRuleLine } from '../../../sim/haproxy-dataplane/rule-lines.ts';
import * as kit from '../../support/model.ts';

const layout = {
  owner: 'c1',
  apiVersion: 'v3' as const,
  slots: 4,
  healthChecks: true,
  transparentBinds: false,
};
const pool = {
  ...kit.pool('c1--default-web-80.l7', [kit.member('192.0.2.1', 61000)]),
  health: 'http' as const,
  check: {
    type: 'http' as const,
    path: '/healthz',
    intervalSeconds: 5,
    timeoutSeconds: 1,
    rise: 1,
    fall: 3,
    headers: [
      { name: 'Host', value: 'api.example.com' },
      { name: 'X-Probe', value: '100% a b' },
    ],
    expect: [
      { from: 200, to: 204 },
      { from: 302, to: 302 },
    ],
  },
};

describe('Data Plane backend lists: http_checks and stick_rules', () => {
  it('the adapter writes the headers and statuses; the simulator renders them as HAProxy reads them', () => {
    const checks = httpChecksFor(pool, layout);
    assert.deepEqual(checks.map(httpCheckLine), [
      'http-check send hdr "Host" "api.example.com" hdr "X-Probe" "100%%\\x20a\\x20b"',
      'http-check expect status 200-204,302',
    ]);
    assert.deepEqual(
      httpChecksFor({ ...pool, check: { ...pool.check, headers: [], expect: undefined } as never }, layout),
      [],
    );
    assert.deepEqual(httpChecksFor(pool, { ...layout, healthChecks: false }), [], 'checks off: none');
  });

  it('the simulator refuses what it cannot write, naming it', () => {
    for (const [o, why] of [
      [{ type: 'connect' }, /http-check type "connect"/],
      [{ type: 'expect', match: 'status' }, /expect: pattern is required/],
      [{ type: 'expect', match: 'body', pattern: 'x' }, /expect: match body/],
      [{ type: 'send', headers: [{ name: 'X' }] }, /send: fmt is required/],
    ] as const) {
      assert.throws(
        () => httpCheckLine(o),
        (e: Error) => e instanceof RuleRefused && why.test(e.message),
      );
    }
  });

  it('SourceIP persistence: a stick table of client addresses and `stick on src`; none without it', () => {
    const sticky = { ...pool, persistence: 'SourceIP' as const };
    assert.deepEqual(backendFor(sticky, true, layout).stick_table, {
      type: 'ip',
      size: 102_400,
      expire: 1_800_000,
    });
    assert.deepEqual(stickRulesFor(sticky).map(stickRuleLine), ['stick on src']);
    assert.equal(backendFor(pool, true, layout).stick_table, undefined);
    assert.deepEqual(stickRulesFor(pool), []);
    assert.throws(() => stickRuleLine({ type: 'on' }), /stick on: pattern is required/);
    assert.throws(() => stickRuleLine({ type: 'forever', pattern: 'src' }), /stick rule type forever/);
  });
});
