/**
 * A probe's timeout on a busy process (lag-tolerant-timeout.ts): a connection that completed in
 * time while the process was busy past the deadline is read before the timeout is called. The
 * node port prober (endpoint-probe.ts `tcpConnect`) and the simulators' member checks
 * (member-prober.ts) rely on it, as the sandbox kubelet's probes do; a plain timer loses that race,
 * which is what made a loaded machine's Pods and members flap.
 */
import assert from 'node:assert/strict';
import { createServer, Socket, type AddressInfo } from 'node:net';
import { it } from 'node:test';
import { tcpConnect } from '../../../src/agent/rules/endpoint-probe.ts';
import { lagTolerantTimeout } from '../../../src/runtime/lag-tolerant-timeout.ts';
import { MemberProber } from '../../../src/runtime/member-prober.ts';

/** Keeps the process busy for `ms` once the current I/O is out (a long synchronous step). */
const busyAfterIo = (ms: number) =>
  setImmediate(() => {
    const until = Date.now() + ms;
    while (Date.now() < until);
  });

/** The same connect with a plain timer, to show the race the helper settles. */
function naiveConnect(port: number, timeoutMs: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = new Socket();
    const done = (ok: boolean) => {
      s.destroy();
      resolve(ok);
    };
    s.setTimeout(timeoutMs, () => done(false));
    s.once('error', () => done(false));
    s.connect({ host: '127.0.0.1', port }, () => done(true));
  });
}

it('a connection made in time is not called a timeout because the process was busy past it', async (t) => {
  const server = createServer((c) => c.destroy());
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  t.after(() => server.close());
  const { port } = server.address() as AddressInfo;

  const naive = naiveConnect(port, 30);
  busyAfterIo(120);
  assert.equal(await naive, false, 'a plain timer loses the race (what the helper is for)');

  const probe = tcpConnect('127.0.0.1', port, 30);
  busyAfterIo(120);
  assert.equal(await probe, true, 'the node port prober reads the connection first');

  const prober = new MemberProber({ timeoutMs: 30 });
  const member = prober.states([{ address: '127.0.0.1', port }]);
  busyAfterIo(120);
  assert.equal((await member)[0]?.health, 'up', "the simulators' member check too");
});

it('a timeout still fires, and a settled race ignores it', async () => {
  const calls: string[] = [];
  await new Promise<void>((resolve) => {
    lagTolerantTimeout(() => {
      calls.push('timeout');
      resolve();
    }, 10);
  });
  assert.deepEqual(calls, ['timeout']);
  const cleared = lagTolerantTimeout(() => calls.push('late'), 10);
  clearTimeout(cleared);
  await new Promise((r) => setTimeout(r, 40));
  assert.deepEqual(calls, ['timeout'], 'cleared before it fired: never called');
  // Refused at once: the verdict is the refusal, not a timeout.
  const closed = createServer();
  await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
  const { port } = closed.address() as AddressInfo;
  await new Promise<void>((r) => closed.close(() => r()));
  assert.equal(await tcpConnect('127.0.0.1', port, 1000), false);
});
