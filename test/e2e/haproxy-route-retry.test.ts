/**
 * A route's retries (an HTTPRoute rule's `retry`: Pool.retryStatuses) on a real HAProxy, every
 * transport (runtime; Data Plane API v2 and v3 on the simulator), with a member that fails each
 * request's first attempts. A status the rule names is sent again, one it does not name is the
 * answer; a member that resets the connection is tried again too (`empty-response`), and once
 * every attempt failed the client gets an answer (502), never a hang. Changed in place (fewer
 * attempts, another status) and taken off, each pass is observed back with nothing left to do,
 * and what the member saw follows.
 */
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { describe, it } from 'node:test';
import { request } from 'undici';
import type { LbState, L7VirtualService } from '../../src/model/types.ts';
import { converge } from '../support/converge.ts';
import { assertNoListeners, haproxyMissing } from '../support/haproxy.ts';
import { TRANSPORTS } from '../support/haproxy-transports.ts';
import * as kit from '../support/model.ts';

const VIP = '127.0.66.1';
const PORT = 18166;
const MEMBER = { ip: '127.0.66.11', port: 18167 };
const POOL = 'e2e--shop-web-80.l7.retry-00000001';

/** The member: `/fail/<id>?n=N&how=503|reset` fails the first N attempts of `id`, then answers 200. */
function member(seen: Map<string, number>) {
  return (req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url ?? '/', 'http://m');
    const id = url.pathname.split('/')[2] ?? '';
    const n = Number(url.searchParams.get('n') ?? 0);
    const tries = (seen.get(id) ?? 0) + 1;
    seen.set(id, tries);
    if (tries > n) return void res.writeHead(200).end(`ok after ${tries}`);
    if (url.searchParams.get('how') === 'reset') req.socket.resetAndDestroy();
    else res.writeHead(503).end('busy');
  };
}

function state(retry?: { statuses: number[]; attempts?: number }): LbState {
  const vs: L7VirtualService = {
    kind: 'l7',
    name: 'e2e--gw-shop.web-HTTP-18166',
    vip: VIP,
    port: PORT,
    ingressClass: 'npl',
    routes: [{ host: '', path: '/', pathType: 'Prefix', pool: POOL, source: 'HTTPRoute shop/web' }],
    defaultPool: undefined,
  };
  const pool = kit.pool(POOL, [kit.member(MEMBER.ip, MEMBER.port, { pod: 'shop/web-0' })], {
    health: 'http',
    service: 'shop/web',
    servicePort: '80',
    ...(retry ? { retryStatuses: retry.statuses } : {}),
    ...(retry?.attempts !== undefined ? { retries: retry.attempts } : {}),
  });
  return { pools: [pool], virtualServices: [vs], certificates: [] };
}

let ids = 0;
/** One request failing its first `n` attempts `how`: the status the client got, and the member's count. */
async function get(seen: Map<string, number>, n: number, how: '503' | 'reset') {
  const id = `r${++ids}`;
  const r = await request(`http://${VIP}:${PORT}/fail/${id}?n=${n}&how=${how}`, {
    reset: true,
    headersTimeout: 8000,
    bodyTimeout: 8000,
  });
  await r.body.dump();
  return { status: r.statusCode, attempts: seen.get(id) ?? 0 };
}

describe('a route retry on a real HAProxy (HTTPRoute retry)', { skip: haproxyMissing() }, () => {
  for (const transport of TRANSPORTS) {
    it(`${transport.name}: named statuses and resets are sent again up to the attempts, then answered; changed in place and taken off`, async (t) => {
      const seen = new Map<string, number>();
      const server = createServer(member(seen));
      await new Promise<void>((r) => server.listen(MEMBER.port, MEMBER.ip, () => r()));
      t.after(() => {
        server.closeAllConnections();
        return new Promise<void>((r) => server.close(() => r()));
      });
      const rig = await transport.start(t);
      t.after(() => assertNoListeners('127.0.66.', [PORT]));

      await converge(rig.adapter, state({ statuses: [503], attempts: 2 }));
      assert.deepEqual(await get(seen, 2, '503'), { status: 200, attempts: 3 }, 'two 503s retried');
      assert.deepEqual(
        await get(seen, 5, '503'),
        { status: 503, attempts: 3 },
        'the budget spent: the answer',
      );
      assert.deepEqual(await get(seen, 1, 'reset'), { status: 200, attempts: 2 }, 'a reset retried');
      assert.deepEqual(await get(seen, 5, 'reset'), { status: 502, attempts: 3 }, 'every attempt reset: 502');

      // In place: one attempt more, connection failures alone (a 503 is the answer).
      await converge(rig.adapter, state({ statuses: [], attempts: 3 }));
      assert.deepEqual(await get(seen, 1, '503'), { status: 503, attempts: 1 }, '503 no longer named');
      assert.deepEqual(await get(seen, 3, 'reset'), { status: 200, attempts: 4 }, 'three resets retried');

      // Taken off: HAProxy's own default, failed connections alone (a member's reset is the answer).
      await converge(rig.adapter, state());
      assert.deepEqual(await get(seen, 1, '503'), { status: 503, attempts: 1 });
      assert.deepEqual(await get(seen, 1, 'reset'), { status: 502, attempts: 1 }, 'not retried');
      assert.deepEqual(rig.specProblems(), []);
    });
  }
});
