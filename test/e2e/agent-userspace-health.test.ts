/**
 * Issue 30, item 6: with userspace forwarding, a node port whose Pod cannot be reached refuses
 * connections, as a load balancer's TCP check sees it (a plain connect, which is all HAProxy's
 * L4 check does), and accepts again once the Pod answers. Real sockets on loopback; the prober's
 * fall/rise logic is also checked with an injected connect, without timers.
 */
import assert from 'node:assert/strict';
import { createServer, type Server, Socket } from 'node:net';
import { describe, it, type TestContext } from 'node:test';
import { EndpointProber } from '../../src/agent/rules/endpoint-probe.ts';
import { UserspaceBackend } from '../../src/agent/rules/userspace.ts';
import { socketReserver } from '../../src/agent/port-reservation.ts';
import type { Mapping } from '../../src/agent/port-table.ts';

const NODE = '127.0.49.1';
const POD = '127.0.49.2';

function lbCheck(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = new Socket();
    const done = (ok: boolean) => {
      s.destroy();
      resolve(ok);
    };
    s.setTimeout(1000, () => done(false));
    s.once('error', () => done(false));
    s.connect({ host: NODE, port }, () => done(true));
  });
}

/** Polls `check` every 100 ms until it gives `want`, for at most `ms`; the time it took. */
async function until(check: () => Promise<boolean>, want: boolean, ms: number): Promise<number> {
  const start = Date.now();
  while (Date.now() - start < ms) {
    if ((await check()) === want) return Date.now() - start;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`still ${String(!want)} after ${ms} ms`);
}

async function podServer(t: TestContext, port: number): Promise<Server> {
  const server = createServer({ allowHalfOpen: true }, (s) => {
    s.on('error', () => s.destroy());
    s.resume();
    s.on('end', () => s.end('pod\n'));
  });
  await new Promise<void>((r) => server.listen(port, POD, () => r()));
  t.after(() => new Promise<void>((r) => (server.listening ? server.close(() => r()) : r())));
  return server;
}

describe('userspace forwarding: member health never lies', () => {
  it('a node port refuses connections within seconds of its Pod turning unreachable, and accepts again once it answers', async (t) => {
    const podPort = 18161;
    let pod = await podServer(t, podPort);
    const res = await socketReserver.reserve(NODE, 18160, 'tcp');
    assert.ok(res, 'the node port is ours');
    t.after(() => res.release());
    const backend = new UserspaceBackend({ probe: { intervalMs: 200, timeoutMs: 300, fall: 2, rise: 1 } });
    t.after(() => backend.stop());
    const m = {
      podKey: 'default/web-1',
      podIP: POD,
      podPort,
      nodePort: 18160,
      protocol: 'tcp',
      family: 'IPv4',
      reservation: res,
    } as unknown as Mapping;
    await backend.sync([m]);
    assert.equal(await lbCheck(18160), true, 'a live Pod: the check passes');

    // The Pod's IP goes dead: nothing accepts on it any more.
    await new Promise<void>((r) => pod.close(() => r()));
    const down = await until(() => lbCheck(18160), false, 5000);
    assert.ok(down <= 5000);
    assert.equal(backend.reachable(m), false);
    // Stays down while the Pod is unreachable (no flapping back up).
    for (let i = 0; i < 3; i++) {
      await new Promise((r) => setTimeout(r, 200));
      assert.equal(await lbCheck(18160), false);
    }

    // The Pod answers again: the node port accepts and forwards.
    pod = await podServer(t, podPort);
    await until(() => lbCheck(18160), true, 5000);
    assert.equal(backend.reachable(m), true);
    const reply = await new Promise<string>((resolve, reject) => {
      const s = new Socket({ allowHalfOpen: true });
      let text = '';
      s.on('data', (d) => (text += d.toString()));
      s.on('end', () => resolve(text));
      s.on('error', reject);
      s.connect({ host: NODE, port: 18160 }, () => s.end());
    });
    assert.equal(reply, 'pod\n');
  });

  it('fall and rise: the port pauses only after `fall` failures in a row and resumes after `rise` successes', async () => {
    const answers: boolean[] = [];
    const events: string[] = [];
    const prober = new EndpointProber({
      intervalMs: 3_600_000,
      fall: 2,
      rise: 2,
      connect: async () => answers.shift() ?? true,
      onChange: (_, up) => events.push(up ? 'up' : 'down'),
    });
    let paused = false;
    prober.watch('k', {
      podIP: POD,
      podPort: 1,
      pause: async () => void (paused = true),
      resume: async () => !(paused = false),
    });
    answers.push(false, true, false, false, true, false, true, true);
    await prober.probe('k'); // fail 1
    await prober.probe('k'); // ok: resets
    await prober.probe('k'); // fail 1
    assert.equal(paused, false, 'one failure is not enough');
    await prober.probe('k'); // fail 2: down
    assert.equal(paused, true);
    await prober.probe('k'); // ok 1
    await prober.probe('k'); // fail: resets
    await prober.probe('k'); // ok 1
    assert.equal(paused, true, 'one success is not enough');
    await prober.probe('k'); // ok 2: up
    assert.equal(paused, false);
    assert.deepEqual(events, ['down', 'up']);
    // A port left paused when its forward goes accepts again.
    answers.push(false, false);
    await prober.probe('k');
    await prober.probe('k');
    assert.equal(paused, true);
    await prober.stop();
    assert.equal(paused, false);
  });
});
