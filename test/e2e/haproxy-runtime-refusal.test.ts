/**
 * The runtime transport on a real HAProxy when HAProxy refuses a runtime command: a server the
 * running HAProxy already has and the file does not (an apply cut short after its `add server`,
 * or an operator's hand on the admin socket). Team A's pool gains that very server, team B's pool
 * a Pod of its own, in one batch. Before the fix the refused `add server` failed every change of
 * the batch as `SocketFailed` (which also reads as "HAProxy is away" and holds every write), and
 * again on every pass, since the file never caught up. Now the file is reloaded instead: both
 * changes go through in that one apply, traffic reaches both new Pods, and the next apply has
 * nothing to do and needs no reload.
 */
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { describe, it, type TestContext } from 'node:test';
import { request } from 'undici';
import { serverName } from '../../adapters/haproxy/config.ts';
import { adminSocket, socketCommand } from '../../adapters/haproxy/process.ts';
import { plan } from '../../src/plan/diff.ts';
import { assertNoListeners, haproxyMissing, startHaproxy } from '../support/haproxy.ts';
import * as kit from '../support/model.ts';

const VIP = '127.0.49.1';
const PORTS = { a: 18161, b: 18162 } as const;
const PODS = {
  a1: ['127.0.49.11', 18171],
  a2: ['127.0.49.12', 18172],
  b1: ['127.0.49.13', 18173],
  b2: ['127.0.49.14', 18174],
} as const;
type Pod = keyof typeof PODS;

async function echo(t: TestContext, name: Pod): Promise<void> {
  const [ip, port] = PODS[name];
  const server = createServer((_req, res) => res.end(name));
  await new Promise<void>((r) => server.listen(port, ip, () => r()));
  t.after(() => new Promise<void>((r) => server.close(() => r())));
}

const member = (p: Pod) => kit.member(PODS[p][0], PODS[p][1], { pod: `team/${p}` });
const pool = (team: 'a' | 'b', pods: Pod[]) =>
  kit.pool(`e2e--team-${team}-80`, pods.map(member), { service: `team/${team}` });
const vs = (team: 'a' | 'b') =>
  kit.l4(`e2e--team-${team}-lb-80`, `e2e--team-${team}-80`, {
    vip: VIP,
    port: PORTS[team],
    source: `team/${team}`,
  });

/** Which Pods answer on a port, over enough fresh connections to see each of a round robin. */
async function answering(port: number): Promise<Set<string>> {
  const seen = new Set<string>();
  for (let i = 0; i < 8; i++) {
    const r = await request(`http://${VIP}:${port}/`, { reset: true });
    seen.add(await r.body.text());
  }
  return seen;
}

describe('runtime transport: a runtime command HAProxy refuses', { skip: haproxyMissing() }, () => {
  it("falls back to a reload: neither team's change fails, now or on the next pass", async (t) => {
    assertNoListeners('127.0.49.', Object.values(PORTS));
    for (const p of Object.keys(PODS) as Pod[]) await echo(t, p);
    const rig = await startHaproxy(t);
    const a = rig.adapter('e2e', { healthChecks: false });
    t.after(() => a.close());
    const first = { pools: [pool('a', ['a1']), pool('b', ['b1'])], virtualServices: [vs('a'), vs('b')] };
    assert.ok((await a.apply(plan(first, await a.observe()).changes)).every((r) => r.ok));

    // The fault: HAProxy already has team A's next server; the file does not.
    const name = serverName(member('a2'));
    const added = await socketCommand(
      adminSocket(rig.paths),
      `add server e2e--team-a-80/${name} ${PODS.a2[0]}:${PODS.a2[1]}`,
    );
    assert.match(added, /New server registered/);

    const next = {
      pools: [pool('a', ['a1', 'a2']), pool('b', ['b1', 'b2'])],
      virtualServices: [vs('a'), vs('b')],
    };
    const reloads = a.stats.reloads;
    const results = await a.apply(plan(next, await a.observe()).changes);
    assert.deepEqual(
      results.filter((r) => !r.ok).map((r) => [r.change.name, r.error?.code, r.error?.message]),
      [],
    );
    assert.equal(a.stats.reloads, reloads + 1, 'one reload, in place of the refused command');
    assert.deepEqual(await answering(PORTS.a), new Set(['a1', 'a2']));
    assert.deepEqual(await answering(PORTS.b), new Set(['b1', 'b2']));

    // Read back as sent; the next pass has nothing to write, and a member change is runtime again.
    assert.deepEqual(plan(next, await a.observe()).changes, []);
    const third = { ...next, pools: [pool('a', ['a1', 'a2']), pool('b', ['b2'])] };
    assert.ok((await a.apply(plan(third, await a.observe()).changes)).every((r) => r.ok));
    assert.equal(a.stats.reloads, reloads + 1, 'no reload for a member change');
    assert.deepEqual(await answering(PORTS.b), new Set(['b2']));
  });
});
