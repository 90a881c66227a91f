/**
 * The machine-wide lock two suites take per test file that binds fixed addresses: a second taker
 * waits until the first lets go (or its process dies), a wait is bounded and then fails saying
 * why, and only the files that need it take it.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { describe, it } from 'node:test';
import { filesOf, needsLock, takeLock } from '../../support/file-lock.ts';

describe(
  'the per-file lock of test runs',
  { skip: process.platform !== 'linux' && 'abstract sockets are Linux only' },
  () => {
    it('a second taker waits for the first, then holds it', async () => {
      const name = `npl-lb-test/unit/${randomUUID()}`;
      const first = await takeLock(name);
      let second = false;
      const waiting = takeLock(name, 5000).then((s) => {
        second = true;
        return s;
      });
      await new Promise((r) => setTimeout(r, 400));
      assert.equal(second, false, 'still held by the first');
      await new Promise<void>((r) => first.close(() => r()));
      const s = await waiting;
      assert.equal(second, true);
      await new Promise<void>((r) => s.close(() => r()));
    });

    it('a wait is bounded, and then fails naming the lock', async () => {
      const name = `npl-lb-test/unit/${randomUUID()}`;
      const held = await takeLock(name);
      await assert.rejects(takeLock(name, 300), new RegExp(`${name}: another test run held`));
      await new Promise<void>((r) => held.close(() => r()));
    });

    it('e2e files and files naming fixed loopback addresses take it; the others do not', () => {
      assert.equal(needsLock('test/e2e/x.test.ts', ''), true);
      assert.equal(needsLock('test/unit/a.test.ts', "const vip = '127.0.20.1';"), true);
      assert.equal(needsLock('test/unit/a.test.ts', "server.listen(0, '127.0.0.1')"), false);
      assert.equal(needsLock('test/unit/a.test.ts', "range: '127.2.30.0/24'"), false);
    });

    it('a shard of the runner is read as the files it imports (each takes its own lock), any other file as itself', () => {
      const shard = '/b/test/unit/devices.shard.test.js';
      const text = "// Generated\nimport './adapters/a.test.js';\nimport './sim/b/c.test.js';\n";
      assert.deepEqual(filesOf(shard, text), [
        '/b/test/unit/adapters/a.test.js',
        '/b/test/unit/sim/b/c.test.js',
      ]);
      assert.deepEqual(filesOf('/b/test/unit/x.test.js', text), ['/b/test/unit/x.test.js']);
      // Only whole import lines of test files: nothing else in a shard names a file to lock.
      assert.deepEqual(filesOf(shard, "import 'node:fs';\n  import './a.test.js';\n"), []);
    });
  },
);
