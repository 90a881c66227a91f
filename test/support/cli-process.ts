/**
 * Running `npl-lb` as a process in tests: started with tsx from the repository, its stdout and
 * stderr collected, killed after the test if it is still running.
 */
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { join } from 'node:path';
import type { TestContext } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

export const ROOT = fileURLToPath(new URL('../../', import.meta.url));
export const CLI = ['--import', 'tsx', join(ROOT, 'src/main/cli.ts')];
export const run = promisify(execFile);

export interface CliProcess {
  child: ChildProcess;
  /** Everything it printed so far, stdout and stderr. */
  out: () => string;
}

export function startCli(
  t: Pick<TestContext, 'after'>,
  args: string[],
  opts: { env?: NodeJS.ProcessEnv; cwd?: string } = {},
): CliProcess {
  const child = spawn(process.execPath, [...CLI, ...args], {
    cwd: opts.cwd ?? ROOT,
    env: opts.env ?? process.env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
  t.after(() => {
    if (child.exitCode === null) child.kill('SIGKILL');
  });
  return { child, out: () => out };
}

/** Runs `npl-lb` to completion; resolves with its exit code and stderr, failing or not. */
export function runCli(
  args: string[],
  env: NodeJS.ProcessEnv = process.env,
): Promise<{ code: number; stderr: string }> {
  return run(process.execPath, [...CLI, ...args], { cwd: ROOT, env }).then(
    (r) => ({ code: 0, stderr: r.stderr }),
    (e: { code: number; stderr: string }) => ({ code: e.code, stderr: e.stderr }),
  );
}

export const exited = (c: ChildProcess): Promise<number | null> =>
  c.exitCode !== null ? Promise.resolve(c.exitCode) : new Promise((r) => c.once('exit', (code) => r(code)));
