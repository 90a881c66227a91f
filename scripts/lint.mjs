// The lint of `npm test`: eslint and `prettier --check` over the checkout, side by side, each
// one's output kept and handed back whole (so that parallel outputs do not mix).
import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import process from 'node:process';

const require = createRequire(import.meta.url);
/** A package's script, by its path inside the package. */
export const bin = (pkg, path) =>
  join(require.resolve(`${pkg}/package.json`).slice(0, -'package.json'.length), path);

/** Runs a node script in `cwd`; resolves with its name, exit code and output. */
export function runNode(cwd, name, args) {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, args, { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (out += d));
    child.on('close', (code) => resolve({ name, code, out }));
  });
}

/** The type check (tsc --noEmit: the test build's JavaScript is esbuild's, transpile.mjs). */
export function typeCheckJob(root) {
  return runNode(root, 'type check', [bin('typescript', 'bin/tsc'), '-p', 'tsconfig.json', '--noEmit']);
}

/** The type check, eslint and prettier --check over `root`, side by side. */
export function lintJobs(root) {
  return [
    typeCheckJob(root),
    runNode(root, 'eslint', [bin('eslint', 'bin/eslint.js'), '.']),
    runNode(root, 'prettier', [bin('prettier', 'bin/prettier.cjs'), '--check', '.']),
  ];
}
