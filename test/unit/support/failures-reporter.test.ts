/**
 * scripts/failures-reporter.mjs, the reporter npm test adds after TAP: silent while the run goes,
 * then the tests that failed of themselves, each with its file, its suites and its error's first
 * lines. A CI log that keeps only its tail must still name the failure.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { pathToFileURL } from 'node:url';
import { ROOT } from '../../support/cli-process.ts';

interface Event {
  type: string;
  data: Record<string, unknown>;
}
type Reporter = (source: AsyncIterable<Event>) => AsyncIterable<string>;

async function report(events: Event[]): Promise<string> {
  const url = pathToFileURL(join(ROOT, 'scripts', 'failures-reporter.mjs')).href;
  const { default: reporter } = (await import(url)) as { default: Reporter };
  async function* source(): AsyncGenerator<Event> {
    yield* events;
  }
  let out = '';
  for await (const chunk of reporter(source())) out += chunk;
  return out;
}

const start = (file: string, nesting: number, name: string): Event => ({
  type: 'test:start',
  data: { file, nesting, name },
});
const failure = (file: string, nesting: number, name: string, error: unknown, line?: number): Event => ({
  type: 'test:fail',
  data: { file, nesting, name, line, details: { error } },
});

describe('the failures reporter (the failed tests last, for a log that keeps its tail)', () => {
  it('says nothing when nothing failed', async () => {
    const out = await report([
      start('/a.js', 0, 'suite'),
      start('/a.js', 1, 'passes'),
      { type: 'test:pass', data: { file: '/a.js', nesting: 1, name: 'passes' } },
    ]);
    assert.equal(out, '');
  });

  it('names each failed test under its suites with its cause, not the suites it failed', async () => {
    const cause = new Error('the member was never written');
    const wrapped = Object.assign(new Error('test failed'), { cause, failureType: 'testCodeFailure' });
    const suiteFailed = Object.assign(new Error('1 subtest failed'), { failureType: 'subtestsFailed' });
    const out = await report([
      start('/a.js', 0, 'outer'),
      start('/b.js', 0, 'other file'),
      start('/a.js', 1, 'inner'),
      start('/b.js', 1, 'b test'),
      start('/a.js', 2, 'converges'),
      failure('/a.js', 2, 'converges', wrapped, 42),
      failure('/a.js', 1, 'inner', suiteFailed),
      failure('/a.js', 0, 'outer', suiteFailed),
      failure('/b.js', 1, 'b test', 'a thrown string'),
    ]);
    const lines = out.split('\n');
    assert.ok(lines.includes('# failed tests: 2'), out);
    assert.ok(lines.includes('# /a.js:42'), out);
    assert.ok(lines.includes('#   outer > inner > converges'), out);
    assert.ok(lines.includes('#     Error: the member was never written'), out);
    assert.ok(lines.includes('#   other file > b test'), out);
    assert.ok(lines.includes('#     a thrown string'), out);
    assert.ok(!out.includes('subtest failed'), out);
    assert.ok(!out.includes('node:internal'), out);
  });
});
