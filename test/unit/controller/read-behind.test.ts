/**
 * The sweep's reads of the device behind the passes (src/controller/read-behind.ts) as a value of
 * their own: what is put on top of a read, when a read is not taken and another made, when the
 * device is left to the next pass to read, and how many reads a sweep makes at most.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { ApplyResult } from '../../../src/adapter/contract.ts';
import type { Change } from '../../../src/adapter/changes.ts';
import type { ObservedByName } from '../../../src/plan/diff.ts';
import { ReadBehind } from '../../../src/controller/read-behind.ts';
import * as kit from '../../support/model.ts';

const empty = (): ObservedByName => ({
  pools: new Map(),
  virtualServices: new Map(),
  certificates: new Map(),
  foreign: new Map(),
  drifted: new Set(),
});

const created = (name: string, ok = true, terminal = false): ApplyResult => {
  const change: Change = { op: 'create', kind: 'pool', name, desired: kit.pool(name, []) };
  return ok ? { change, ok } : { change, ok, error: { code: 'Unavailable', message: 'busy', terminal } };
};

/** ReadBehind over reads that answer when the test says, recording what it did. */
function rig() {
  const pending: ((o: ObservedByName) => void)[] = [];
  const log: string[] = [];
  let generation = 0;
  /** The process's CPU as the reads see it (ms): the test moves it. */
  const cpu = { ms: 1000 };
  const installed: ObservedByName[] = [];
  const reads = new ReadBehind({
    read: () =>
      new Promise((resolve) => {
        log.push('read');
        pending.push(resolve);
      }),
    generation: () => generation,
    invalidate: () => {
      generation++;
      log.push('invalidate');
    },
    install: (o) => {
      installed.push(o);
      log.push(`install ${[...o.pools.keys()].join(',')}`);
    },
    onReadFailed: () => log.push('failed'),
    onObserved: (readCpuMs) => log.push(readCpuMs === 0 ? 'observed' : `observed after ${readCpuMs} ms`),
    cpuMs: () => cpu.ms,
  });
  const answer = async (o = empty()) => {
    pending.shift()!(o);
    for (let i = 0; i < 5; i++) await new Promise((r) => setImmediate(r));
  };
  return { reads, log, installed, answer, cpu, bump: () => generation++ };
}

describe('reads of the device behind the passes', () => {
  it('puts on top of a read what was issued after it began, and the read is then what is kept', async () => {
    const { reads, log, answer } = rig();
    reads.start();
    const w = reads.issue();
    reads.answered(w, [created('after'), created('refused', false, true)]);
    await answer();
    assert.deepEqual(log, ['read', 'install after', 'observed']);
    // A pass whose write was issued after the read in place began may put it on top of it; one
    // issued before may not (the read may be newer than it).
    assert.equal(reads.after(w), true);
    assert.equal(reads.after(w - 1), false);
  });

  it('a write issued before the read began and answered while it was out: read again, the third taken', async () => {
    const { reads, log, answer } = rig();
    // Each read is straddled by a write issued before it began and answered while it is out.
    const w1 = reads.issue();
    reads.start();
    const w2 = reads.issue();
    reads.answered(w1, [created('one')]);
    await answer();
    assert.deepEqual(log, ['read', 'read'], 'not taken: another read');
    const w3 = reads.issue();
    reads.answered(w2, [created('two')]);
    await answer();
    assert.deepEqual(log, ['read', 'read', 'read'], 'not taken either');
    reads.answered(w3, [created('three')]);
    await answer();
    // The third is taken as it is (the straddling write not put on top of it).
    assert.deepEqual(log, ['read', 'read', 'read', 'install ', 'observed']);
    await reads.done();
  });

  it("says what the sweep's reads cost, from the first one's start to the last one's end", async () => {
    const { reads, log, answer, cpu } = rig();
    cpu.ms = 1000;
    const w1 = reads.issue();
    reads.start();
    cpu.ms += 40;
    reads.answered(w1, [created('one')]);
    await answer();
    // Not taken (a straddling write): the second read's cost is the same sweep's.
    cpu.ms += 25;
    await answer();
    assert.deepEqual(log, ['read', 'read', 'install ', 'observed after 65 ms']);
    // The next sweep counts from its own start.
    cpu.ms += 500;
    reads.start();
    cpu.ms += 7;
    await answer();
    assert.deepEqual(log.slice(4), ['read', 'install ', 'observed after 7 ms']);
  });

  it('a retryable failure while out leaves the device to the next pass; an invalidation drops the read', async () => {
    const a = rig();
    a.reads.start();
    a.reads.answered(a.reads.issue(), [created('p', false)]);
    await a.answer();
    assert.deepEqual(a.log, ['read', 'invalidate', 'observed']);
    assert.deepEqual(a.installed, []);

    const b = rig();
    b.reads.start();
    b.bump();
    await b.answer();
    assert.deepEqual(b.log, ['read', 'observed']);
    assert.deepEqual(b.installed, []);
  });

  it('asked again while out: another read follows; done() waits for both; a failed read is said', async () => {
    const { reads, log, answer } = rig();
    reads.start();
    reads.start();
    let done = false;
    const finished = reads.done().then(() => (done = true));
    await answer();
    assert.deepEqual(log, ['read', 'read']);
    assert.equal(done, false);
    await answer();
    await finished;
    assert.deepEqual(log, ['read', 'read', 'install ', 'observed']);

    const failing = new ReadBehind({
      read: () => Promise.reject(new Error('down')),
      generation: () => 0,
      invalidate: () => log.push('invalidate'),
      install: () => log.push('install'),
      onReadFailed: (err) => log.push(`failed ${(err as Error).message}`),
      onObserved: () => log.push('observed'),
    });
    log.length = 0;
    failing.start();
    await failing.done();
    assert.deepEqual(log, ['failed down', 'observed']);
  });
});
