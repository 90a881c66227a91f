/**
 * The pass log (pass-log.ts): one info line per pass that changed something; one warning per
 * failed object and code at most once a minute; what no longer holds a warning back is forgotten,
 * the oldest first, as failures are logged (never a walk of every failure remembered).
 */
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { describe, it } from 'node:test';
import type { ApplyResult } from '../../../src/adapter/contract.ts';
import { PassLog } from '../../../src/controller/pass-log.ts';
import { createLogger } from '../../../src/runtime/logger.ts';
import * as kit from '../../support/model.ts';

function logged() {
  const lines: Record<string, unknown>[] = [];
  const destination = new Writable({
    write(chunk: Buffer, _enc, done) {
      lines.push(JSON.parse(chunk.toString()) as Record<string, unknown>);
      done();
    },
  });
  return { lines, log: new PassLog(createLogger({ name: 'controller', level: 'info', destination })) };
}

const failed = (name: string): ApplyResult => ({
  change: { op: 'update', kind: 'pool', name, desired: kit.pool(name), observed: kit.pool(name) },
  ok: false,
  error: { code: 'Unavailable', message: `pool ${name}: device down`, terminal: false },
});

describe('PassLog', () => {
  it('one line per pass, one warning per failed object and code a minute, the expired forgotten oldest first', (t) => {
    let now = 1_000_000;
    t.mock.method(Date, 'now', () => now);
    const { lines, log } = logged();
    const warnings = () => lines.filter((l) => l.level === 'WARN').map((l) => l.name);

    log.record([failed('a')], 5);
    log.record([failed('a')], 5);
    assert.deepEqual(warnings(), ['a'], 'a warned once in its minute');
    assert.equal(lines.filter((l) => l.msg === 'load balancer updated').length, 2);
    now += 500;
    log.record([failed('b')], 5);
    now += 60_000;
    // a's minute is over: warned again, and remembered from now; b's is over too, but b is only
    // forgotten as it is reached from the oldest end.
    log.record([failed('a')], 5);
    assert.deepEqual(warnings(), ['a', 'b', 'a']);
    now += 600;
    log.record([failed('c')], 5);
    assert.equal(log.remembered, 2, 'b forgotten; a (warned again) and c kept');
    log.record([failed('a')], 5);
    assert.deepEqual(warnings(), ['a', 'b', 'a', 'c'], 'a still held back in its new minute');
  });

  it('a pass that changed nothing says nothing', () => {
    const { lines, log } = logged();
    log.record([], 1);
    assert.deepEqual(lines, []);
  });
});
