/**
 * The sandbox controllers' work queue: a burst of adds is one pass per namespace; a pass that
 * throws is tried again by itself after a backoff (nothing else need change in that namespace),
 * the error told for the log; a pass that succeeds resets the backoff; stop() leaves no timer.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Writable } from 'node:stream';
import { logPassFailure, NamespaceQueue } from '../../../src/sandbox/namespace-queue.ts';
import { createLogger } from '../../../src/runtime/logger.ts';
import { eventually } from '../../support/sandbox.ts';

describe('NamespaceQueue', () => {
  it('a burst of adds is one pass per namespace', async () => {
    const seen: string[] = [];
    const q = new NamespaceQueue((ns) => seen.push(ns));
    q.add('a', 'b');
    q.add('a');
    await new Promise((r) => setImmediate(r));
    assert.deepEqual(seen.sort(), ['a', 'b']);
    q.stop();
  });

  it('a pass that throws is retried without another add, with a growing delay; a success resets it', async () => {
    const at: number[] = [];
    const errors: string[] = [];
    let failuresLeft = 2;
    const q = new NamespaceQueue(
      (ns) => {
        at.push(Date.now());
        if (ns === 'a' && failuresLeft-- > 0) throw new Error(`conflict ${failuresLeft}`);
      },
      (ns, err) => errors.push(`${ns}: ${(err as Error).message}`),
    );
    q.add('a');
    await eventually(async () => at.length === 3, 5000, 'retried twice, the third pass succeeds');
    assert.deepEqual(errors, ['a: conflict 1', 'a: conflict 0']);
    // Timers never fire early, but a busy machine fires them late: each wait is held to its own
    // delay (100 ms, then doubled), not to the other's (a late first would outlast an on-time second).
    assert.ok(at[1]! - at[0]! >= 90, 'the first retry waits its delay');
    assert.ok(at[2]! - at[1]! >= 190, 'the second waits the doubled delay');
    // Succeeded: nothing more runs by itself.
    await new Promise((r) => setTimeout(r, 500));
    assert.equal(at.length, 3);
    q.stop();
  });

  it('stop() cancels a pending retry', async () => {
    let passes = 0;
    const q = new NamespaceQueue(() => {
      passes++;
      throw new Error('always');
    });
    q.add('a');
    await new Promise((r) => setImmediate(r));
    assert.equal(passes, 1);
    q.stop();
    await new Promise((r) => setTimeout(r, 300));
    assert.equal(passes, 1, 'no retry after stop');
  });

  it('a failed pass is logged as a warning naming its controller, namespace and error', () => {
    const lines: string[] = [];
    const destination = new Writable({
      write(chunk: Buffer, _enc, done) {
        lines.push(chunk.toString());
        done();
      },
    });
    logPassFailure(
      createLogger({ name: 'sandbox', level: 'warn', destination }),
      'workload',
      'team-a',
      new Error('conflict'),
    );
    const line = JSON.parse(lines[0]!) as Record<string, unknown>;
    assert.equal(line.level, 'WARN');
    assert.equal(line.controller, 'workload');
    assert.equal(line.namespace, 'team-a');
    assert.equal(line.err, 'conflict');
  });
});
