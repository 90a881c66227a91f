/**
 * test/support/runner-hook.ts: the test runner's async hook without its destroy callback. In a
 * fresh process with the hook loaded: the runner's hook is the one stripped (once), tests still
 * nest in suites, and an error thrown later by a timer a test started still fails that test by
 * name (the mapping of resources to tests, which the hook exists for, is intact).
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { extname, join } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { fromRunnerHarness, withoutDestroy } from '../../support/runner-hook.ts';

const ext = extname(fileURLToPath(import.meta.url));
const HOOK = new URL(`../../support/runner-hook${ext}`, import.meta.url).href;

const PROBE = `
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { stripped } from ${JSON.stringify(HOOK)};
describe('outer', () => {
  it('inner', async () => {
    await new Promise((r) => setTimeout(r, 5));
    assert.equal(stripped.count, 1);
  });
});
it('late failure', async () => {
  setTimeout(() => { throw new Error('thrown by a timer of this test'); }, 1);
  await new Promise((r) => setTimeout(r, 50));
});
`;

describe('the test runner hook without destroy (test/support/runner-hook.ts)', () => {
  it('names the harness by its frame only, and drops destroy alone', () => {
    assert.equal(fromRunnerHarness('Error\n    at setup (node:internal/test_runner/harness:140:16)'), true);
    assert.equal(fromRunnerHarness('Error\n    at x (file:///work/test/harness.js:1:1)'), false);
    assert.equal(fromRunnerHarness(undefined), false);
    const init = () => undefined;
    const destroy = () => undefined;
    assert.deepEqual(withoutDestroy({ init, destroy }), { init });
  });

  it('in a fresh process: suites nest, a late error fails its own test by name', async (t) => {
    const dir = mkdtempSync(join(tmpdir(), 'npl-runner-hook-'));
    t.after(() => rmSync(dir, { recursive: true, force: true }));
    const file = join(dir, 'probe.test.mjs');
    writeFileSync(file, PROBE);
    const loader = ext === '.ts' ? ['--import', 'tsx'] : [];
    // Not a child of this runner: a runner of its own, reporting TAP.
    const { NODE_TEST_CONTEXT: _ctx, ...env } = process.env;
    const out = await promisify(execFile)(
      process.execPath,
      [...loader, '--import', HOOK, '--test', '--test-reporter=tap', file],
      { timeout: 30_000, env },
    ).catch((err: { stdout: string; code: number }) => ({ stdout: err.stdout, code: err.code }));
    const tap = out.stdout;
    assert.equal('code' in out ? out.code : 0, 1, tap);
    assert.match(tap, /^ {4}ok 1 - inner$/m, 'the test nested in its suite, and the hook stripped once');
    assert.match(tap, /^not ok 2 - late failure$/m, tap);
    assert.match(tap, /thrown by a timer of this test/);
    assert.match(tap, /^# pass 1$/m);
  });
});
