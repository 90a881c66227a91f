/**
 * Request mirrors in haproxy.cfg (mirrors.ts): the global loads the script only where a route
 * mirrors; a route's copies are a `wait-for-body` and one `lua.npl_mirror <socket>` per mirror on
 * its requests, after its header changes (a share by `rand`); each mirrored pool has a frontend of
 * the virtual service on that socket, unique to this HAProxy; read back, the routes carry their
 * mirrors, and a mirror whose frontend is gone (deleted by hand) is read as not mirroring.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { renderConfig } from '../../../adapters/haproxy/config.ts';
import { parseConfig } from '../../../adapters/haproxy/config-parse.ts';
import { MIRROR_LUA, mirrorSocket } from '../../../adapters/haproxy/mirrors.ts';
import type { L7VirtualService, Pool } from '../../../src/model/types.ts';
import * as kit from '../../support/model.ts';

const VS = 'c1--gw-shop.web-HTTP-80';
const pools: Pool[] = ['c1--web', 'c1--shadow', 'c1--audit'].map((n) =>
  kit.pool(n, [kit.member('10.0.0.1', 61001)]),
);
const vs = (mirrors = true): L7VirtualService => ({
  kind: 'l7',
  name: VS,
  vip: '192.0.2.10',
  port: 80,
  ingressClass: 'npl',
  defaultPool: undefined,
  routes: [
    {
      host: '',
      path: '/',
      pathType: 'Prefix',
      pool: 'c1--web',
      source: 'HTTPRoute shop/web',
      order: 0,
      requestHeaders: { set: [{ name: 'X-A', value: '1' }], add: [], remove: [] },
      ...(mirrors
        ? {
            mirrors: [{ pool: 'c1--shadow' }, { pool: 'c1--audit', share: { numerator: 1, denominator: 4 } }],
          }
        : {}),
    },
  ],
});
const opts = { owner: 'c1', adminSocket: '/run/a.sock', certDir: '/etc/haproxy/certs' };

describe('request mirrors in haproxy.cfg', () => {
  it('loads the script, copies after the header change, on a socket of its own per pool', () => {
    const text = renderConfig(pools, [vs()], [], opts);
    assert.match(text, /^ {4}lua-load \/etc\/haproxy\/certs\/npl-mirror\.lua$/m);
    const lines = text.split('\n').map((l) => l.trim());
    const setAt = lines.findIndex((l) => l.startsWith('http-request set-header "X-A"'));
    const shadow = mirrorSocket(VS, 'c1--shadow', opts.adminSocket);
    const audit = mirrorSocket(VS, 'c1--audit', opts.adminSocket);
    const copyAt = lines.indexOf(`http-request lua.npl_mirror ${shadow} if is_r0`);
    assert.ok(setAt > 0 && copyAt > setAt, 'copied after the route changed it');
    assert.ok(lines.includes(`http-request lua.npl_mirror ${audit} if is_r0 { rand(4) -m int lt 1 }`));
    assert.ok(
      lines.indexOf('http-request wait-for-body time 1000 if is_r0') < copyAt,
      'the body waited for first',
    );
    for (const [pool, socket] of [
      ['c1--audit', audit],
      ['c1--shadow', shadow],
    ])
      assert.match(
        text,
        new RegExp(
          `frontend ${VS}_m\\d\\n {4}# npl-lb part-of=${VS} mirror=${pool}\\n {4}mode http\\n {4}bind ${socket}\\n {4}default_backend ${pool}\\n`,
        ),
      );
    // The mirrored pools speak HTTP (their backends are `mode http`).
    assert.match(text, /backend c1--shadow\n(?: {4}.*\n)*? {4}mode http/);
    // Another HAProxy (another admin socket) has sockets of its own.
    assert.notEqual(mirrorSocket(VS, 'c1--shadow', '/run/b.sock'), shadow);
    assert.ok(shadow.length < 100, 'a socket name fits');
  });

  it('reads the mirrors back, and not one whose frontend is gone', () => {
    const text = renderConfig(pools, [vs()], [], opts);
    const read = (t: string) =>
      (parseConfig(t, 'c1').owned.virtualServices.find((v) => v.name === VS) as L7VirtualService).routes[0]!
        .mirrors;
    assert.deepEqual(read(text), vs().routes[0]!.mirrors);
    const noShadow = text.replace(/frontend \S+_m1\n(?: {4}.*\n)+/, '');
    assert.notEqual(noShadow, text);
    assert.deepEqual(read(noShadow), [{ pool: 'c1--audit', share: { numerator: 1, denominator: 4 } }]);
    const none = noShadow.replace(/frontend \S+_m0\n(?: {4}.*\n)+/, '');
    assert.equal(read(none), undefined);
  });

  it('loads nothing where no route mirrors', () => {
    const text = renderConfig(pools, [vs(false)], [], opts);
    assert.doesNotMatch(text, /lua-load|lua\.npl_mirror|_m0/);
  });

  it('the script copies only what it can send whole, bounded in flight', () => {
    assert.match(MIRROR_LUA, /core\.register_action\('npl_mirror', \{ 'http-req' \}/);
    assert.match(MIRROR_LUA, /LIMIT = 256/);
    assert.match(MIRROR_LUA, /transfer-encoding/);
    assert.match(MIRROR_LUA, /core\.register_task/);
  });
});
