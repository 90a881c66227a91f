import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { runUntilSignal } from '../../../src/main/lifecycle.ts';
import { ErrorCodes, NplError } from '../../../src/runtime/errors.ts';
import { silentLogger } from '../../../src/runtime/logger.ts';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A stand-in for SIGTERM (the test runner owns the process's real signal handlers). */
function signal(): { promise: Promise<string>; send: () => void } {
  let send!: () => void;
  const promise = new Promise<string>((r) => {
    send = () => r('SIGTERM');
  });
  return { promise, send };
}

describe('runUntilSignal', () => {
  it('on SIGTERM waits for stop() to drain in-flight work, then exits 0', async () => {
    const steps: string[] = [];
    const term = signal();
    const run = runUntilSignal(
      {
        start: async () => void steps.push('start'),
        stop: async () => {
          steps.push('stopping');
          await sleep(50);
          steps.push('drained');
        },
      },
      silentLogger(),
      'stopping',
      { stopTimeoutMs: 2000, signal: term.promise },
    );
    await sleep(20);
    term.send();
    assert.equal(await run, 0);
    assert.deepEqual(steps, ['start', 'stopping', 'drained']);
  });

  it('a stop() that does not drain within the deadline fails with NPL_SHUTDOWN_TIMEOUT', async () => {
    const began = Date.now();
    const term = signal();
    const run = runUntilSignal(
      { start: async () => {}, stop: () => new Promise<void>(() => {}) },
      silentLogger(),
      'stopping',
      { stopTimeoutMs: 150, signal: term.promise },
    );
    await sleep(20);
    term.send();
    await assert.rejects(
      run,
      (err: unknown) => err instanceof NplError && err.code === ErrorCodes.SHUTDOWN_TIMEOUT,
    );
    const took = Date.now() - began;
    assert.ok(took >= 150 && took < 5000, `took ${took} ms`);
  });

  it('a failure (lost Lease) stops the component and goes up', async () => {
    let stopped = false;
    const lost = new NplError(ErrorCodes.LEADERSHIP_LOST, 'lost');
    await assert.rejects(
      runUntilSignal(
        {
          start: async () => {},
          stop: async () => {
            stopped = true;
          },
        },
        silentLogger(),
        'stopping',
        { failure: Promise.resolve(lost), stopTimeoutMs: 1000, signal: signal().promise },
      ),
      (err: unknown) => err === lost,
    );
    assert.equal(stopped, true);
  });
});
