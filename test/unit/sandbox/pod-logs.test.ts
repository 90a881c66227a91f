/**
 * A container's log as the sandbox's kubelet keeps it (pod-logs.ts): lines split across writes are
 * joined, the newest 10,000 kept, a huge line cut; answered since a time, the last N, with
 * timestamps; a sinceTime, sinceSeconds or tailLines the API server would refuse is a 400.
 */
import assert from 'node:assert/strict';
import { PassThrough } from 'node:stream';
import { describe, it } from 'node:test';
import { keepLog, type LogLine, logText } from '../../../src/sandbox/pod-logs.ts';
import { ApiError } from '../../../src/sandbox/status.ts';

const settle = () => new Promise((r) => setImmediate(r));

describe("a container's log", () => {
  it('keeps whole lines across writes, the newest 10,000, none longer than 16 KiB', async () => {
    const out = new PassThrough();
    const log: LogLine[] = [];
    keepLog(out, log);
    out.write('first li');
    out.write('ne\nsecond\nthi');
    await settle();
    assert.deepEqual(
      log.map((l) => l.text),
      ['first line', 'second'],
      'a line is kept once it ends',
    );
    out.write(`rd\n${'x'.repeat(100_000)}\n`);
    for (let i = 0; i < 10_100; i++) out.write(`n${i}\n`);
    await settle();
    assert.equal(log.length, 10_000);
    assert.equal(log.at(-1)!.text, 'n10099');
    assert.ok(log.every((l) => l.text.length <= 16 * 1024));
  });

  it('answers since a time, the last N, with timestamps; refuses what the API server refuses', () => {
    const lines: LogLine[] = [
      { at: Date.parse('2026-12-02T10:00:00Z'), text: 'old' },
      { at: Date.parse('2026-12-02T10:00:05Z'), text: 'new' },
    ];
    const q = (s: string) => logText(lines, new URLSearchParams(s));
    assert.equal(q(''), 'old\nnew\n');
    assert.equal(q('sinceTime=2026-12-02T10:00:05Z'), 'new\n');
    assert.equal(q('tailLines=1'), 'new\n');
    assert.equal(q('tailLines=0'), '');
    assert.equal(q('tailLines=1&timestamps=true'), '2026-12-02T10:00:05.000Z new\n');
    for (const bad of ['tailLines=-1', 'tailLines=x', 'sinceTime=yesterday', 'sinceSeconds=x'])
      assert.throws(
        () => q(bad),
        (e: unknown) => e instanceof ApiError && e.status.code === 400,
        bad,
      );
  });
});
