/**
 * Request mirrors (an HTTPRoute's RequestMirror filter: HttpRoute.mirrors) on a real HAProxy, every
 * transport (runtime; Data Plane API v2 and v3 on the simulator, held to the spec), with a member
 * and a mirror that record what they see. A route's requests are answered by its member and copied
 * to the mirror as the route changed them (a header set, the query kept, a POST's body whole); a
 * share (1 in 2) is copied about half the time; the mirror's frontend deleted by hand, or (Data
 * Plane) the stored script changed by hand and loaded by a reload, is read back as a route that no
 * longer mirrors and written again by the next pass (the script with a reload of its own); through
 * a reload of HAProxy it still copies; a mirror that hangs or is gone never touches the client's
 * answer; taken off the route, nothing more is copied, and neither the script nor its load stays.
 * Each pass is observed back with nothing left to do. Beside another cluster on one HAProxy
 * (runtime transport), that cluster's passes keep our routes' script loaded.
 */
import assert from 'node:assert/strict';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createServer, type Server } from 'node:http';
import { describe, it } from 'node:test';
import { request } from 'undici';
import type { HttpRoute, LbState, L7VirtualService, Mirror } from '../../src/model/types.ts';
import { plan } from '../../src/plan/diff.ts';
import { converge } from '../support/converge.ts';
import { assertNoListeners, haproxyMissing, startHaproxy } from '../support/haproxy.ts';
import { configPath } from '../../adapters/haproxy/process.ts';
import { TRANSPORTS, type TransportRig } from '../support/haproxy-transports.ts';
import * as kit from '../support/model.ts';

const VIP = '127.0.68.1';
const PORT = 18186;
const MAIN = { ip: '127.0.68.11', port: 18187 };
const COPY = { ip: '127.0.68.12', port: 18187 };
const VS = 'e2e--gw-shop.web-HTTP-18186';
const MAIN_POOL = 'e2e--shop-web-80';
const COPY_POOL = 'e2e--shop-shadow-80';

function state(mirrors: { all?: Mirror[]; half?: Mirror[] }): LbState {
  const route = (path: string, m: Mirror[] | undefined, order: number): HttpRoute => ({
    host: '',
    path,
    pathType: 'Prefix',
    pool: MAIN_POOL,
    source: 'HTTPRoute shop/web',
    order,
    requestHeaders: { set: [{ name: 'X-Route', value: path }], add: [], remove: ['X-Drop'] },
    ...(m ? { mirrors: m } : {}),
  });
  const vs: L7VirtualService = {
    kind: 'l7',
    name: VS,
    vip: VIP,
    port: PORT,
    ingressClass: 'npl',
    routes: [route('/all', mirrors.all, 0), route('/half', mirrors.half, 1)],
    defaultPool: undefined,
  };
  const pool = (name: string, m: typeof MAIN, service: string) =>
    kit.pool(name, [kit.member(m.ip, m.port, { pod: `${service}-0` })], { service, servicePort: '80' });
  return {
    pools: [pool(MAIN_POOL, MAIN, 'shop/web'), pool(COPY_POOL, COPY, 'shop/shadow')],
    virtualServices: [vs],
    certificates: [],
  };
}

interface Seen {
  method: string;
  url: string;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/** The member and the mirror, each recording what it sees; the mirror can be made to hang. */
async function members(t: { after: (fn: () => Promise<void>) => void }) {
  const seen = { main: [] as Seen[], copy: [] as Seen[] };
  let hang = false;
  const servers: Server[] = [];
  for (const [m, list, name] of [
    [MAIN, seen.main, 'main'],
    [COPY, seen.copy, 'copy'],
  ] as const) {
    const s = createServer((req, res) => {
      let body = '';
      req.on('data', (d: Buffer) => (body += d.toString()));
      req.on('end', () => {
        list.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body });
        if (name === 'copy' && hang) return; // never answers
        res.writeHead(200).end(name);
      });
    });
    await new Promise<void>((r) => s.listen(m.port, m.ip, () => r()));
    servers.push(s);
  }
  t.after(async () => {
    for (const s of servers) {
      s.closeAllConnections();
      await new Promise<void>((r) => s.close(() => r()));
    }
  });
  return { seen, hang: (on: boolean) => (hang = on), stopCopy: () => servers[1]!.close() };
}

async function send(path: string, init: { method?: string; body?: string } = {}): Promise<string> {
  const r = await request(`http://${VIP}:${PORT}${path}`, {
    method: (init.method ?? 'GET') as 'GET',
    reset: true,
    headersTimeout: 8000,
    bodyTimeout: 8000,
    headers: { 'x-drop': 'gone', 'x-keep': 'kept' },
    ...(init.body !== undefined ? { body: init.body } : {}),
  });
  const text = await r.body.text();
  assert.equal(r.statusCode, 200, text);
  return text;
}

/** Waits (bounded) until `ok` holds of the mirror's record. */
async function until(ok: () => boolean, what: string): Promise<void> {
  const end = Date.now() + 5000;
  while (!ok()) {
    if (Date.now() > end) assert.fail(`the mirror never saw ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

/** The mirror's frontend deleted by hand: from the runtime file (and a reload), or through the API. */
async function dropMirrorFrontend(rig: TransportRig): Promise<void> {
  if (rig.client) {
    const c = rig.client;
    const name = (await c.frontends()).map((f) => f.name).find((n) => n.startsWith(`${VS}_m`));
    assert.ok(name, "the mirror's frontend is on the device");
    const tx = await c.startTransaction(await c.configVersion());
    await c.deleteFrontend(tx, name);
    await c.commit(tx);
    await rig.idle();
    return;
  }
  const file = rig.configFile!;
  const text = readFileSync(file, 'utf8');
  const edited = text.replace(/frontend \S+_m0\n(?: {4}.*\n)+/, '');
  assert.notEqual(edited, text, "the mirror's frontend is in the file");
  writeFileSync(file, edited);
  await rig.reload();
}

for (const tr of TRANSPORTS)
  describe(`request mirrors on a real HAProxy (${tr.name})`, { skip: haproxyMissing() }, () => {
    it('copies as the route changed them, a share of them, never waits for the mirror, is repaired', async (t) => {
      const m = await members(t);
      const rig = await tr.start(t);
      t.after(() => assertNoListeners('127.0.68.', [PORT]));

      await converge(rig.adapter, state({ all: [{ pool: COPY_POOL }] }));
      assert.equal(await send('/all/a?id=1'), 'main');
      await until(() => m.seen.copy.some((s) => s.url === '/all/a?id=1'), 'GET /all/a?id=1');
      const copy = m.seen.copy.find((s) => s.url === '/all/a?id=1')!;
      assert.equal(copy.method, 'GET');
      assert.equal(copy.headers['x-route'], '/all', "the route's header change is in the copy");
      assert.equal(copy.headers['x-keep'], 'kept');
      assert.equal(copy.headers['x-drop'], undefined, 'a header the route removes is not copied');
      assert.equal(await send('/all/post', { method: 'POST', body: 'hello mirror' }), 'main');
      await until(() => m.seen.copy.some((s) => s.url === '/all/post'), 'the POST');
      assert.equal(m.seen.copy.find((s) => s.url === '/all/post')!.body, 'hello mirror', 'its body whole');
      // A route without mirrors copies nothing.
      const before = m.seen.copy.length;
      await send('/half/x');
      await new Promise((r) => setTimeout(r, 300));
      assert.equal(m.seen.copy.length, before, '/half does not mirror yet');

      // A share: 1 in 2 of /half's requests (bounded: 120 requests, each answered by the member).
      await converge(
        rig.adapter,
        state({
          all: [{ pool: COPY_POOL }],
          half: [{ pool: COPY_POOL, share: { numerator: 1, denominator: 2 } }],
        }),
      );
      for (let i = 0; i < 120; i++) await send(`/half/p?i=${i}`);
      await new Promise((r) => setTimeout(r, 500));
      const copied = m.seen.copy.filter((s) => s.url.startsWith('/half/p')).length;
      assert.ok(copied >= 30 && copied <= 90, `about half copied: ${copied} of 120`);

      // The mirror's frontend deleted by hand: read back as not mirroring, written again.
      await dropMirrorFrontend(rig);
      const want = state({ all: [{ pool: COPY_POOL }] });
      assert.notDeepEqual(plan(want, await rig.adapter.observe()).changes, [], 'the loss is seen');
      await converge(rig.adapter, want);

      // The Data Plane's stored script changed by hand to one that copies nothing, and HAProxy
      // reloaded with it: read as not mirroring, written again with a reload of its own (the
      // pass changes nothing else), so copies resume with no other reload.
      if (rig.client) {
        const v3 = tr.name.endsWith('v3');
        const inert = "core.register_action('npl_mirror', { 'http-req' }, function(txn, dst) end, 1)\n";
        await rig.client.send(
          'PUT',
          '/services/haproxy/storage/general/npl-mirror.lua',
          {},
          v3
            ? { form: { field: 'file_upload', filename: 'npl-mirror.lua', content: inert } }
            : { text: inert },
        );
        await rig.reload();
        await rig.idle();
        assert.equal(await send('/all/inert'), 'main');
        await new Promise((r) => setTimeout(r, 500));
        assert.ok(
          !m.seen.copy.some((s) => s.url === '/all/inert'),
          'the edited script runs and copies nothing',
        );
        assert.notDeepEqual(plan(want, await rig.adapter.observe()).changes, [], 'the script edit is seen');
        const reloads = rig.reloads();
        await converge(rig.adapter, want);
        await rig.idle();
        assert.ok(rig.reloads() > reloads, 'the script written again is loaded');
      }
      assert.equal(await send('/all/again?id=2'), 'main');
      await until(() => m.seen.copy.some((s) => s.url === '/all/again?id=2'), 'a copy once repaired');
      // Through a reload of HAProxy (as a restart would): still copied, nothing left to do.
      await rig.reload();
      await rig.idle();
      assert.equal(await send('/all/reloaded'), 'main');
      await until(() => m.seen.copy.some((s) => s.url === '/all/reloaded'), 'a copy after a reload');
      assert.deepEqual(plan(want, await rig.adapter.observe()).changes, [], 'nothing to do after a reload');

      // A mirror that never answers: the client's answers still come, each its own.
      m.hang(true);
      for (let i = 0; i < 10; i++) assert.equal(await send(`/all/hang?i=${i}`), 'main');
      // Gone altogether (its port closed): still answered.
      m.hang(false);
      m.stopCopy();
      for (let i = 0; i < 5; i++) assert.equal(await send(`/all/gone?i=${i}`), 'main');

      // Taken off: the route no longer copies; the mirror's pool may go.
      const off = state({});
      off.pools = off.pools.filter((p) => p.name !== COPY_POOL);
      await converge(rig.adapter, off);
      if (rig.configFile) {
        assert.doesNotMatch(readFileSync(rig.configFile, 'utf8'), /lua\.npl_mirror|lua-load|_m0/);
        assert.ok(!existsSync(join(rig.filesDir, 'npl-mirror.lua')), 'the script is taken away');
      }
      if (rig.client) {
        // Neither the script nor the global section's load of it stays behind.
        const files = (await rig.client.send('GET', '/services/haproxy/storage/general')).body;
        assert.doesNotMatch(JSON.stringify(files), /npl-mirror/, 'the stored script is deleted');
        assert.doesNotMatch(
          JSON.stringify(await rig.client.global()),
          /npl-mirror/,
          'the global loads no script',
        );
        assert.deepEqual(plan(off, await rig.adapter.observe()).changes, [], 'nothing left to do');
      }
      assert.deepEqual(rig.specProblems(), []);
    });
  });

describe(
  'request mirrors beside another cluster on one HAProxy (runtime transport)',
  { skip: haproxyMissing() },
  () => {
    it("another cluster's passes keep the script loaded while a route of ours mirrors, and neither leaves it once none does", async (t) => {
      const m = await members(t);
      const rig = await startHaproxy(t);
      const ours = rig.adapter('e2e', { healthChecks: false });
      const theirs = rig.adapter('other', { healthChecks: false });
      t.after(() => Promise.all([ours.close(), theirs.close()]).then(() => undefined));
      t.after(() => assertNoListeners('127.0.68.', [PORT, PORT + 1]));
      const file = configPath(rig.paths);
      const script = join(ours.certDir, 'npl-mirror.lua');
      await converge(ours, state({ all: [{ pool: COPY_POOL }] }));
      // The other cluster, no mirror of its own: its config check passes with our routes' action in
      // the file, its reload keeps the script loaded, and our copies go on.
      const other = (port: number): LbState => ({
        pools: [
          kit.pool('other--web-80', [kit.member(MAIN.ip, MAIN.port)], {
            service: 'web/web',
            servicePort: '80',
          }),
        ],
        virtualServices: [kit.l4('other--web-80', 'other--web-80', { vip: VIP, port })],
        certificates: [],
      });
      await converge(theirs, other(PORT + 1));
      assert.match(readFileSync(file, 'utf8'), /lua-load /);
      assert.ok(existsSync(script), 'the script stays while our route mirrors');
      assert.equal(await send('/all/beside?id=3'), 'main');
      await until(() => m.seen.copy.some((s) => s.url === '/all/beside?id=3'), 'a copy after their reload');
      // Ours taken off: neither the load nor the script stays, whoever reloads next.
      const off = state({});
      off.pools = off.pools.filter((p) => p.name !== COPY_POOL);
      await converge(ours, off);
      assert.doesNotMatch(readFileSync(file, 'utf8'), /lua-load|lua\.npl_mirror/);
      assert.ok(!existsSync(script), 'the script is taken away');
    });
  },
);
