/**
 * The Data Plane simulator renders rule objects with code of its own, written from the API's
 * model (sim/haproxy-dataplane/rule-lines.ts), so it catches an adapter mapping that is wrong in
 * a way its own inverse would undo. Before, the simulator rendered through the adapter's inverse
 * mapping and the runtime transport's renderer: a value written into a field its rule type does
 * not read came back out as if it were right, and every traffic test passed.
 *
 * Every rule the adapter writes for a rich route renders, and the file passes `haproxy -c`; a
 * mutant mapping (the header value in `hdr_match`, which set-header does not read, read back from
 * there by a mutant inverse) is refused 422 by the simulator, though an inverse mutated alike
 * turns it back into the right rule.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { gatewayRules } from '../../../adapters/haproxy/http-routes.ts';
import { gatewayObjects, httpRuleToDp } from '../../../adapters/haproxy/dataplane/route-layout.ts';
import { checkConfig } from '../../../adapters/haproxy/process.ts';
import type { L7VirtualService } from '../../../src/model/types.ts';
import { emptyConfig, renderConfig } from '../../../sim/haproxy-dataplane/config-store.ts';
import { httpRuleLine, RuleRefused } from '../../../sim/haproxy-dataplane/rule-lines.ts';
import { haproxyBinMissing } from '../../support/haproxy.ts';

const vs: L7VirtualService = {
  kind: 'l7',
  name: 'e2e--gw',
  vip: '127.0.0.1',
  port: 18999,
  ingressClass: '',
  defaultPool: undefined,
  routes: [
    {
      host: 'a.example.com',
      path: '/api',
      pathType: 'Prefix',
      pool: 'e2e--api',
      source: 'HTTPRoute t/a',
      order: 0,
      headers: [{ type: 'Exact', name: 'X-Team', value: "it's" }],
      requestHeaders: {
        set: [{ name: 'X-Set', value: 'v 1' }],
        add: [{ name: 'X-Add', value: '%x' }],
        remove: ['X-Del'],
      },
      responseHeaders: { set: [{ name: 'X-Resp', value: 'r' }], add: [], remove: [] },
      rewrite: { path: { type: 'ReplacePrefixMatch', value: '/v2' } },
    },
    {
      host: 'b.example.com',
      path: '/',
      pathType: 'Prefix',
      pool: 'e2e--api',
      source: 'HTTPRoute t/b',
      order: 1,
      redirect: { scheme: 'https', statusCode: 301 },
    },
    {
      host: '',
      path: '/split',
      pathType: 'Exact',
      pool: 'e2e--api',
      source: 'HTTPRoute t/c',
      order: 2,
      backends: [
        { pool: 'e2e--api', weight: 3 },
        { pool: 'e2e--web', weight: 1 },
      ],
    },
  ],
};

describe('the Data Plane simulator renders rules with its own code', () => {
  it(
    'every rule the adapter writes for a rich route renders; the file passes haproxy -c',
    { skip: haproxyBinMissing() },
    async (t) => {
      const objs = gatewayObjects(gatewayRules(vs));
      assert.ok(objs.httpRequest.length > 5 && objs.httpResponse.length > 0);
      const config = emptyConfig();
      for (const name of ['e2e--api', 'e2e--web'])
        config.backends.set(name, {
          backend: { name, mode: 'http' },
          servers: [{ name: 's1', address: '127.0.0.1', port: 1 }],
        });
      config.frontends.set(vs.name, {
        frontend: { name: vs.name, mode: 'http' },
        binds: [{ name: 'b', address: '127.0.0.1', port: 18999 }],
        acls: objs.acls,
        rules: objs.rules,
        httpRequest: objs.httpRequest,
        httpResponse: objs.httpResponse,
        tcpRequest: [],
      });
      const dir = mkdtempSync(join(tmpdir(), 'npl-dp-rules-'));
      t.after(() => rmSync(dir, { recursive: true, force: true }));
      const file = join(dir, 'haproxy.cfg');
      writeFileSync(
        file,
        renderConfig(config, { adminSocket: join(dir, 'admin.sock'), serverStateFile: join(dir, 'state') }),
      );
      await checkConfig('haproxy', file);
    },
  );

  it('a wrong mapping its own inverse would undo is refused (422), not rendered as if right', () => {
    const dp = httpRuleToDp(gatewayRules(vs).request.find((r) => r.action.type === 'set-header')!);
    // The mutant: the value in hdr_match (a field of replace-header), read back from there.
    const { hdr_format: value, ...rest } = dp;
    const mutant = { ...rest, hdr_match: value };
    const mutantInverse = (d: typeof mutant) => ({ ...d, hdr_format: d.hdr_match });
    assert.deepEqual(
      mutantInverse(mutant),
      { ...dp, hdr_match: value },
      'an inverse alike would have undone it',
    );
    assert.throws(
      () => httpRuleLine('request', mutant),
      (e: unknown) =>
        e instanceof RuleRefused && e.status === 422 && /set-header: hdr_format is required/.test(e.message),
    );
    // And the right object renders as HAProxy reads it.
    assert.equal(
      httpRuleLine('request', dp),
      `http-request set-header ${dp.hdr_name} ${dp.hdr_format} if ${dp.cond_test}`,
    );
  });

  it('refuses what it cannot write: unknown types, unknown conditions, redirects without a value', () => {
    assert.throws(() => httpRuleLine('request', { type: 'lua' }), RuleRefused);
    assert.throws(
      () => httpRuleLine('request', { type: 'del-header', hdr_name: 'x', cond: 'when', cond_test: 'a' }),
      RuleRefused,
    );
    assert.throws(() => httpRuleLine('request', { type: 'redirect', redir_type: 'location' }), RuleRefused);
    assert.equal(
      httpRuleLine('response', { type: 'return', return_status_code: 404, cond: 'unless', cond_test: 'ok' }),
      'http-response return status 404 unless ok',
    );
  });

  it("a return with headers: they need a content format (the spec's x-dependency), and render after the body", () => {
    const hdrs = [{ name: 'access-control-max-age', fmt: '600' }];
    assert.throws(
      () => httpRuleLine('request', { type: 'return', return_status_code: 200, return_hdrs: hdrs }),
      (e: unknown) => e instanceof RuleRefused && /return_hdrs needs return_content_format/.test(e.message),
    );
    assert.throws(
      () =>
        httpRuleLine('request', {
          type: 'return',
          return_content_format: 'errorfile',
          return_content: '/x',
          return_hdrs: hdrs,
        }),
      RuleRefused,
    );
    assert.equal(
      httpRuleLine('request', {
        type: 'return',
        return_status_code: 200,
        return_content_type: 'text/plain',
        return_content_format: 'lf-string',
        return_content: '"%[str()]"',
        return_hdrs: hdrs,
        cond: 'if',
        cond_test: 'pre',
      }),
      'http-request return status 200 content-type text/plain lf-string "%[str()]" hdr access-control-max-age 600 if pre',
    );
  });
});
