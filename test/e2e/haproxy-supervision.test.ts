/**
 * Issue 30, item 5: HAProxy killed with kill -9 (the master, or the worker, which takes the master
 * with it on the runtime transport) is noticed at once, started again from the current
 * configuration, said so (died, restarted), and traffic through the VIP is back within seconds. A
 * configuration HAProxy refuses is reported (restartFailed, with backoff), not forced.
 */
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { describe, it } from 'node:test';
import { request } from 'undici';
import { configPath, type SupervisionEvent } from '../../adapters/haproxy/process.ts';
import type { L4VirtualService, Pool } from '../../src/model/types.ts';
import { plan } from '../../src/plan/diff.ts';
import { assertNoListeners, haproxyMissing, startHaproxy } from '../support/haproxy.ts';

const VIP = '127.0.51.1';
const POD = ['127.0.51.11', 18171] as const;

async function until(check: () => Promise<boolean> | boolean, ms: number, what: string): Promise<number> {
  const start = Date.now();
  while (Date.now() - start < ms) {
    if (await check()) return Date.now() - start;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`timed out after ${ms} ms waiting for ${what}`);
}

const get = async (): Promise<string | undefined> => {
  try {
    const r = await request(`http://${VIP}:18170/`, { reset: true, headersTimeout: 1000, bodyTimeout: 1000 });
    return await r.body.text();
  } catch {
    return undefined;
  }
};

describe('HAProxy supervised on the runtime transport', { skip: haproxyMissing() }, () => {
  it('kill -9 of the worker and of the master: restarted from the current configuration, said so, traffic back within seconds', async (t) => {
    assertNoListeners('127.0.51.', [18170]);
    const server = createServer((_req, res) => res.end('pod'));
    await new Promise<void>((r) => server.listen(POD[1], POD[0], () => r()));
    t.after(() => new Promise<void>((r) => server.close(() => r())));
    const events: SupervisionEvent[] = [];
    const rig = await startHaproxy(t, { onEvent: (e) => events.push(e), backoffMs: 100, maxBackoffMs: 400 });
    const a = rig.adapter('e2e', { healthChecks: false });
    t.after(() => a.close());
    const pool: Pool = {
      name: 'e2e--web-80',
      protocol: 'TCP',
      health: 'tcp',
      service: 'default/web',
      servicePort: '80',
      members: [{ address: POD[0], port: POD[1], node: 'n1', pod: 'default/web-1', enabled: true }],
    };
    const vs: L4VirtualService = {
      kind: 'l4',
      name: 'e2e--web-lb-80',
      vip: VIP,
      port: 18170,
      protocol: 'TCP',
      pool: pool.name,
      source: 'default/web',
    };
    const state = { pools: [pool], virtualServices: [vs] };
    assert.ok((await a.apply(plan(state, await a.observe()).changes)).every((r) => r.ok));
    assert.equal(await get(), 'pod');

    // The worker: kill -9 takes the master with it (-W without -x).
    const worker = Number(/^Pid: (\d+)/m.exec(await rig.proc.runtime('show info'))![1]);
    process.kill(worker, 'SIGKILL');
    await until(() => events.some((e) => e.type === 'restarted'), 10_000, 'the restart');
    assert.equal(events[0]!.type, 'died');
    const back = await until(async () => (await get()) === 'pod', 5000, 'traffic back');
    assert.ok(back < 5000);
    assert.equal(rig.proc.restarts, 1);
    assert.deepEqual(
      plan(state, await a.observe()).changes,
      [],
      'the configuration it runs is the current one',
    );

    // The master itself.
    process.kill(rig.proc.pid!, 'SIGKILL');
    await until(() => rig.proc.restarts === 2, 10_000, 'the second restart');
    await until(async () => (await get()) === 'pod', 5000, 'traffic back again');

    // A configuration HAProxy refuses: reported with backoff, never forced; fixed, it starts.
    const good = configPath(rig.paths);
    const text = (await import('node:fs')).readFileSync(good, 'utf8');
    writeFileSync(good, `${text}\nfrontend broken\n    bind ${VIP}:18170 nonsense\n`);
    process.kill(rig.proc.pid!, 'SIGKILL');
    await until(
      () => events.filter((e) => e.type === 'restartFailed').length >= 2,
      10_000,
      'refused restarts',
    );
    const failed = events.find((e) => e.type === 'restartFailed') as Extract<
      SupervisionEvent,
      { type: 'restartFailed' }
    >;
    assert.match(failed.message, /haproxy -c/);
    writeFileSync(good, text);
    await until(() => rig.proc.restarts === 3, 10_000, 'the restart once the file is fixed');
    await until(async () => (await get()) === 'pod', 5000, 'traffic back after the fix');
  });
});
