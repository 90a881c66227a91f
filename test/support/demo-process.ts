/**
 * Running `npm start` (the demo) in a test on a temporary work directory, and leaving nothing
 * behind whatever happens: one after-hook, registered before the process starts so it runs before
 * startCli's own, stops the demo (SIGTERM, so it removes what it made), then the HAProxy master
 * running on that directory if the demo died before stopping it, and only then removes the
 * directory. A leaked HAProxy would keep the demo's VIPs bound for every later run.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestContext } from 'node:test';
import { type CliProcess, exited, startCli } from './cli-process.ts';

export interface DemoProcess extends CliProcess {
  /** The demo's work directory (its kubeconfig, HAProxy files). */
  dir: string;
}

/** Stops the HAProxy master whose command line names `dir` (not the printed pid: a test may kill that one). */
export function stopHaproxyOf(dir: string): void {
  let pid: string | undefined;
  try {
    pid = execFileSync('pgrep', ['-o', '-f', `${dir}/haproxy/master.sock`], { encoding: 'utf8' }).trim();
  } catch {
    return; // none running
  }
  try {
    process.kill(Number(pid), 'SIGTERM');
  } catch {
    // already gone
  }
}

export function startDemo(t: Pick<TestContext, 'after'>, args: string[] = []): DemoProcess {
  const dir = mkdtempSync(join(tmpdir(), 'npl-demo-'));
  const started: { demo?: CliProcess } = {};
  t.after(async () => {
    const { demo } = started;
    if (demo && demo.child.exitCode === null && demo.child.signalCode === null) {
      demo.child.kill('SIGTERM');
      const stopped = await Promise.race([
        exited(demo.child).then(() => true),
        new Promise<false>((r) => setTimeout(() => r(false), 10_000).unref()),
      ]);
      if (!stopped) demo.child.kill('SIGKILL');
    }
    stopHaproxyOf(dir);
    rmSync(dir, { recursive: true, force: true });
  });
  const demo = startCli(t, ['demo', '--work-dir', dir, ...args]);
  started.demo = demo;
  return { ...demo, dir };
}
