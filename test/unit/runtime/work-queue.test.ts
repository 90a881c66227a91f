import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { pino } from 'pino';
import { WorkQueue } from '../../../src/runtime/work-queue.ts';
import { eventually } from '../../support/sandbox.ts';

describe('work queue', () => {
  it('coalesces a key queued twice, never runs one key twice at once, reruns a key added while it ran', async () => {
    const runs: string[] = [];
    let inFlight = 0;
    let maxInFlight = 0;
    let release!: () => void;
    const gate = new Promise<void>((r) => {
      release = r;
    });
    const q = new WorkQueue({
      name: 't',
      concurrency: 4,
      reconcile: async (key) => {
        inFlight++;
        maxInFlight = Math.max(maxInFlight, inFlight);
        runs.push(key);
        if (runs.length === 1) await gate;
        inFlight--;
      },
    });
    q.add('a');
    q.add('a');
    q.start();
    await eventually(() => runs.length === 1, 1000, 'first run');
    q.add('a');
    q.add('a');
    release();
    await eventually(() => runs.length === 2, 1000, 'rerun');
    await q.idle();
    assert.deepEqual(runs, ['a', 'a']);
    assert.equal(maxInFlight, 1);
    await q.stop();
  });

  it('retries a failing key with growing per-key backoff and forgets it after a success', async () => {
    const times: number[] = [];
    // The delays the queue chose, from its log (not from the wall clock: the machine is shared).
    const delays: number[] = [];
    const logger = pino(
      { level: 'warn' },
      {
        write: (line: string) => {
          const o = JSON.parse(line) as { retryInMs?: number };
          if (o.retryInMs !== undefined) delays.push(o.retryInMs);
        },
      },
    );
    const q = new WorkQueue({
      name: 't',
      backoff: { initialMs: 20, jitter: 0 },
      logger,
      reconcile: async () => {
        times.push(Date.now());
        if (times.length < 3) throw new Error('not yet');
      },
    });
    q.start();
    q.add('k');
    await eventually(() => times.length === 3, 3000, 'three tries');
    assert.equal(q.failures('k'), 0);
    assert.deepEqual(delays, [20, 40], 'backoff doubles');
    await q.stop();
  });
});

describe('work queue shutdown', () => {
  it('stop() waits for the reconcile in flight to finish, drops queued keys and takes no new ones', async () => {
    const runs: string[] = [];
    let finished = false;
    let release!: () => void;
    const gate = new Promise<void>((r) => {
      release = r;
    });
    const q = new WorkQueue({
      name: 't',
      concurrency: 1,
      reconcile: async (key) => {
        runs.push(key);
        if (key === 'a') {
          await gate;
          finished = true;
        }
      },
    });
    q.add('a');
    q.add('b');
    q.start();
    await eventually(() => runs.length === 1, 1000, 'first run');
    let stopped = false;
    const stopping = q.stop().then(() => {
      stopped = true;
    });
    q.add('c');
    await new Promise((r) => setTimeout(r, 30));
    assert.equal(stopped, false, 'stop() resolved while a reconcile was still running');
    release();
    await stopping;
    assert.equal(finished, true);
    assert.deepEqual(runs, ['a']);
  });
});
