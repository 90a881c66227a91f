/**
 * A released node port is never taken again: a resume under way when the reservation is released
 * (the endpoint prober's, racing a Pod's removal or the agent's stop) gives the port back, and a
 * resume after the release is refused. Before, the resume's listen completed after the release and
 * the port stayed bound by a stopped agent (found by the conformance suite: a test process that
 * never exited).
 */
import assert from 'node:assert/strict';
import { createServer } from 'node:net';
import { describe, it } from 'node:test';
import { socketReserver } from '../../../src/agent/port-reservation.ts';

const ADDRESS = '127.0.0.1';

/** Whether the port can be bound now (then it is let go at once). */
async function free(port: number): Promise<boolean> {
  const s = createServer();
  return new Promise((resolve) => {
    s.once('error', () => resolve(false));
    s.listen({ host: ADDRESS, port, exclusive: true }, () => s.close(() => resolve(true)));
  });
}

async function reserved() {
  for (let i = 0; i < 20; i++) {
    const port = 20000 + Math.floor(Math.random() * 20000);
    const r = await socketReserver.reserve(ADDRESS, port, 'tcp');
    if (r) return r;
  }
  throw new Error('no free port to reserve');
}

describe('node port reservations', () => {
  it('a resume under way when the reservation is released gives the port back', async () => {
    const r = await reserved();
    await r.pause!();
    assert.ok(await free(r.port), 'paused: the port is free');
    const resuming = r.resume!();
    await r.release();
    assert.equal(await resuming, false, 'the resume lost to the release');
    assert.ok(await free(r.port), 'released: nothing listens');
  });

  it('a resume after the release is refused; pause and release are idempotent', async () => {
    const r = await reserved();
    await r.release();
    await r.release();
    assert.equal(await r.resume!(), false);
    await r.pause!();
    assert.ok(await free(r.port));
  });

  it('pause and resume still work while the reservation is held', async () => {
    const r = await reserved();
    await r.pause!();
    assert.ok(await free(r.port));
    assert.equal(await r.resume!(), true);
    assert.equal(await free(r.port), false, 'listening again');
    await r.release();
    assert.ok(await free(r.port));
  });
});
