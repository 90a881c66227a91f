/**
 * Running `npl-lb` as a process in tests, its stdout and stderr collected, killed after the test
 * if it is still running. Under `npm test` the tests run from the compiled mirror (.test-build/,
 * scripts/pretest.mjs) and so does the CLI they start: plain JavaScript, no loader; a test file run
 * from its sources (`node --import tsx --test test/...`) starts the CLI from its sources with tsx.
 */
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { basename, dirname, join } from 'node:path';
import type { TestContext } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

export const ROOT = fileURLToPath(new URL('../../', import.meta.url));
/** Whether this runs compiled (npm test's mirror) rather than from the TypeScript sources. */
export const COMPILED = import.meta.url.endsWith('.js');
/** Runs a script of the repository (`src/main/cli.ts`, `bench/agent/run.ts`) as this process runs. */
export const nodeArgs = (script: string): string[] =>
  COMPILED ? [join(ROOT, script.replace(/\.ts$/, '.js'))] : ['--import', 'tsx', join(ROOT, script)];
export const CLI = nodeArgs('src/main/cli.ts');
/** The checkout itself: the mirror's parent when run from .test-build/. */
export const CHECKOUT = basename(ROOT) === '.test-build' ? dirname(ROOT) : ROOT.replace(/\/$/, '');
/** The workspace's shared/ folder, when beside the checkout (tests only compare bundles with it). */
export const SHARED = join(CHECKOUT, '..', 'shared');
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

/** Runs `npl-lb` to completion; resolves with its exit code, stdout and stderr, failing or not. */
export function runCli(
  args: string[],
  env: NodeJS.ProcessEnv = process.env,
): Promise<{ code: number; stdout: string; stderr: string }> {
  return run(process.execPath, [...CLI, ...args], { cwd: ROOT, env }).then(
    (r) => ({ code: 0, stdout: r.stdout, stderr: r.stderr }),
    (e: { code: number; stdout: string; stderr: string }) => ({
      code: e.code,
      stdout: e.stdout,
      stderr: e.stderr,
    }),
  );
}

export const exited = (c: ChildProcess): Promise<number | null> =>
  c.exitCode !== null ? Promise.resolve(c.exitCode) : new Promise((r) => c.once('exit', (code) => r(code)));
