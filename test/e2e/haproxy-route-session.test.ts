/**
 * A route's session cookie (an HTTPRoute rule's `sessionPersistence`: Pool.sessionCookie) on a
 * real HAProxy, every transport (runtime; Data Plane API v2 and v3 on the simulator), with two
 * members that say who answered. The first answer sets the rule's cookie (its name, a Permanent
 * cookie's Max-Age); a client sending it back stays on its member, through a reload of HAProxy
 * too, while clients without it are spread; a forged value is no way in (balanced, given a cookie
 * of its own); the member behind a cookie leaving the pool (a rollout) moves its clients to the
 * other, never failing them. Changed in place to a Session cookie of 8 s, an older cookie is no
 * longer honoured (HAProxy dates its cookies in steps of 4 s); taken off, no cookie is set. Each
 * pass is observed back with nothing left to do.
 */
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import { describe, it } from 'node:test';
import { request } from 'undici';
import type { LbState, L7VirtualService, SessionCookie } from '../../src/model/types.ts';
import { converge } from '../support/converge.ts';
import { assertNoListeners, haproxyMissing } from '../support/haproxy.ts';
import { TRANSPORTS } from '../support/haproxy-transports.ts';
import * as kit from '../support/model.ts';

const VIP = '127.0.67.1';
const PORT = 18176;
const MEMBERS = [
  { ip: '127.0.67.11', port: 18177, pod: 'shop/web-0' },
  { ip: '127.0.67.12', port: 18177, pod: 'shop/web-1' },
];
const POOL = 'e2e--shop-web-80.l7.session-00000001';

function state(session?: SessionCookie, members = MEMBERS): LbState {
  const vs: L7VirtualService = {
    kind: 'l7',
    name: 'e2e--gw-shop.web-HTTP-18176',
    vip: VIP,
    port: PORT,
    ingressClass: 'npl',
    routes: [{ host: '', path: '/', pathType: 'Prefix', pool: POOL, source: 'HTTPRoute shop/web' }],
    defaultPool: undefined,
  };
  const pool = kit.pool(
    POOL,
    members.map((m) => kit.member(m.ip, m.port, { pod: m.pod })),
    {
      health: 'http',
      service: 'shop/web',
      servicePort: '80',
      ...(session ? { persistence: 'Cookie' as const, sessionCookie: session } : {}),
    },
  );
  return { pools: [pool], virtualServices: [vs], certificates: [] };
}

/** One request (with `cookie` when given): who answered, and the Set-Cookie of the answer. */
async function get(cookie?: string): Promise<{ pod: string; setCookie: string | undefined }> {
  const r = await request(`http://${VIP}:${PORT}/`, {
    reset: true,
    headersTimeout: 8000,
    bodyTimeout: 8000,
    ...(cookie ? { headers: { cookie } } : {}),
  });
  const pod = await r.body.text();
  assert.equal(r.statusCode, 200, pod);
  const set = r.headers['set-cookie'];
  return { pod, setCookie: Array.isArray(set) ? set.join(', ') : set };
}

/** The `name=value` pair of a Set-Cookie header. */
const pairOf = (setCookie: string | undefined): string => setCookie?.split(';')[0] ?? '';
/** The member a cookie pair names (its value before HAProxy's dates). */
const memberOf = (pair: string): string => pair.split('|')[0]!;

async function serve(t: { after: (fn: () => Promise<void>) => void }) {
  const servers: Server[] = [];
  for (const m of MEMBERS) {
    const s = createServer((_req, res) => void res.writeHead(200).end(m.pod));
    await new Promise<void>((r) => s.listen(m.port, m.ip, () => r()));
    servers.push(s);
  }
  t.after(async () => {
    for (const s of servers) {
      s.closeAllConnections();
      await new Promise<void>((r) => s.close(() => r()));
    }
  });
}

describe(
  'a route session cookie on a real HAProxy (HTTPRoute sessionPersistence)',
  { skip: haproxyMissing() },
  () => {
    for (const transport of TRANSPORTS) {
      it(`${transport.name}: the cookie keeps a client on its member; forged, stale or orphaned it balances; changed in place and taken off`, async (t) => {
        await serve(t);
        const rig = await transport.start(t);
        t.after(() => assertNoListeners('127.0.67.', [PORT]));

        await converge(rig.adapter, state({ name: 'shop-sid', absoluteSeconds: 3600, permanent: true }));
        const first = await get();
        assert.match(
          first.setCookie ?? '',
          /^shop-sid=[^;]+;.*\bMax-Age=3600\b/,
          "the rule's name and Max-Age",
        );
        const jar = pairOf(first.setCookie);
        for (let i = 0; i < 6; i++) {
          const again = await get(jar);
          assert.equal(again.pod, first.pod, 'kept on its member');
          // A valid cookie is not set again, but where HAProxy moves its last-seen date on (the
          // value carries `member|last-seen|first-seen` with a lifetime; seen in a slow run):
          // then for the same member.
          if (again.setCookie !== undefined)
            assert.equal(memberOf(pairOf(again.setCookie)), memberOf(jar), 'set again only for its member');
        }
        // Without the cookie the members share the clients (the cookie is what keeps them).
        const spread = new Set<string>();
        for (let i = 0; i < 6; i++) spread.add((await get()).pod);
        assert.equal(spread.size, 2, 'clients without a cookie are balanced');
        // A forged value names no member: balanced, and given a cookie of its own.
        const forged = await get('shop-sid=0123456789abcdef');
        assert.match(forged.setCookie ?? '', /^shop-sid=/);
        // HAProxy restarted (a reload, as an upgrade or a crash makes): the cookie's value comes
        // from the member's address, so its clients stay where they were.
        await rig.reload();
        await rig.idle();
        assert.equal((await get(jar)).pod, first.pod, 'kept through a reload');

        // A rollout takes the cookie's member away: its clients go to the other one, re-issued.
        const other = MEMBERS.find((m) => m.pod !== first.pod)!;
        await converge(
          rig.adapter,
          state({ name: 'shop-sid', absoluteSeconds: 3600, permanent: true }, [other]),
        );
        const moved = await get(jar);
        assert.equal(moved.pod, other.pod);
        assert.match(moved.setCookie ?? '', /^shop-sid=/, 'a cookie for the member that answered');

        // In place: a Session cookie of 8 s (no Max-Age), written and observed back on every
        // transport. HAProxy keeps the session's first date in the cookie (`<server>|<last>|<first>`,
        // dated in steps of 4 s) and sends it again with a newer last date as time passes; a cookie
        // older than its lifetime starts a new session: a new first date. That is HAProxy's own
        // doing, the same behind each transport, so it is waited for on the first alone (looked at
        // every 250 ms, bounded at 20 s), and it comes no sooner than the lifetime's last step.
        await converge(rig.adapter, state({ name: 'shop-sid', absoluteSeconds: 8 }));
        const since = Date.now();
        const short = await get();
        assert.ok(short.setCookie && !/Max-Age/.test(short.setCookie), short.setCookie);
        const firstDate = (c: string | undefined) => pairOf(c).split('=')[1]?.split('|')[2];
        const began = firstDate(short.setCookie);
        assert.ok(began, `dated: ${short.setCookie}`);
        if (transport === TRANSPORTS[0]) {
          let jarNow = pairOf(short.setCookie);
          let renewed = false;
          while (!renewed && Date.now() - since < 20_000) {
            await new Promise((r) => setTimeout(r, 250));
            const next = await get(jarNow);
            if (next.setCookie) jarNow = pairOf(next.setCookie);
            renewed = next.setCookie !== undefined && firstDate(next.setCookie) !== began;
          }
          assert.ok(renewed, 'too old: a new session');
          assert.ok(Date.now() - since >= 4000, 'not before the lifetime was nearly spent');
        }

        // Taken off: no cookie at all.
        await converge(rig.adapter, state());
        assert.equal((await get()).setCookie, undefined);
        assert.deepEqual(rig.specProblems(), []);
      });
    }
  },
);
