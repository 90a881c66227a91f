/**
 * One demo per work directory: the lock is taken, refused to a second demo while its holder
 * lives (naming it), taken over from a holder that is gone, and released by its own holder only.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { it } from 'node:test';
import { takeDemoLock } from '../../../src/main/demo-lock.ts';
import { NplError } from '../../../src/runtime/errors.ts';

it('one demo per work directory; a dead holder is taken over; only the holder releases', (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'npl-demo-lock-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const lock = join(dir, 'demo.lock');
  const release = takeDemoLock(dir);
  assert.equal(readFileSync(lock, 'utf8'), String(process.pid));
  // Another demo (another pid) while this process, the holder, lives: refused, naming it.
  assert.throws(
    () => takeDemoLock(dir, process.pid + 100_000),
    (e: unknown) =>
      e instanceof NplError && e.code === 'NPL_DEMO_RUNNING' && e.message.includes(`pid ${process.pid}`),
  );
  release();
  assert.equal(existsSync(lock), false);
  // A holder that is gone (a child that exited): taken over.
  const gone = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], {
    encoding: 'utf8',
  });
  writeFileSync(lock, gone.stdout.trim());
  const mine = takeDemoLock(dir);
  assert.equal(readFileSync(lock, 'utf8'), String(process.pid));
  // A release by a process that does not hold the lock leaves it.
  writeFileSync(lock, '1');
  mine();
  assert.equal(readFileSync(lock, 'utf8'), '1');
});
