/**
 * One demo per work directory: `npm start` takes `<work-dir>/demo.lock` (its PID) before it
 * touches anything there, so a second `npm start` in the same clone says a demo runs (and which
 * process) instead of deleting the first one's kubeconfig and load balancer files. A lock whose process
 * is gone (a crash, kill -9) is taken over.
 */
import { mkdirSync, openSync, readFileSync, rmSync, writeSync, closeSync } from 'node:fs';
import { join } from 'node:path';
import { ErrorCodes, NplError } from '../runtime/errors.ts';

const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    // EPERM: it exists, owned by someone else.
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
};

/** Takes the lock; returns its release. Throws NPL_DEMO_RUNNING while another demo holds it. */
export function takeDemoLock(workDir: string, pid = process.pid): () => void {
  mkdirSync(workDir, { recursive: true });
  const path = join(workDir, 'demo.lock');
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const fd = openSync(path, 'wx');
      writeSync(fd, String(pid));
      closeSync(fd);
      return () => {
        try {
          if (readFileSync(path, 'utf8').trim() === String(pid)) rmSync(path, { force: true });
        } catch {
          // already gone
        }
      };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      const holder = Number(readFileSync(path, 'utf8').trim());
      if (Number.isInteger(holder) && holder > 0 && holder !== pid && alive(holder)) {
        throw new NplError(
          ErrorCodes.DEMO_RUNNING,
          `a demo is already running from ${workDir} (pid ${holder}): stop it (Ctrl-C) first, or give this one another --work-dir`,
        );
      }
      // A lock left by a process that is gone: taken over.
      rmSync(path, { force: true });
    }
  }
  throw new NplError(ErrorCodes.DEMO_RUNNING, `cannot take ${path}`);
}
