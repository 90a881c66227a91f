/**
 * Loaded with `--import` by `npm test` into each test file's process. A file that binds fixed
 * loopback addresses (127.0.X.Y with X > 0), network namespaces or a HAProxy - every file under
 * test/e2e/, and any other that names such an address - first takes a machine-wide lock named
 * after its path in the repository: two suites on one machine (two clones, or a run beside a run)
 * then run such a file one at a time instead of colliding on its addresses, and each file still
 * runs beside the other files of its own suite, whose addresses differ. The lock is a Linux
 * abstract socket, so it goes with the process whatever ends it. Waiting is bounded (20 minutes,
 * then the file fails saying so); other files never wait.
 */
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const FIXED_ADDRESS = /\b127\.0\.[1-9]\d{0,2}\.\d{1,3}\b/;
const WAIT_MS = 20 * 60_000;

/** Whether the test file at `file` (a path in the repository) needs the lock. */
export function needsLock(rel: string, text: string): boolean {
  return rel.startsWith('test/e2e/') || FIXED_ADDRESS.test(text);
}

function listen(name: string): Promise<Server | undefined> {
  return new Promise((resolve) => {
    const s = createServer((c) => c.destroy());
    s.once('error', () => resolve(undefined));
    s.listen({ path: `\0${name}` }, () => resolve(s));
  });
}

/** Takes the lock `name`, waiting while another process holds it; the server is kept, unref'd. */
export async function takeLock(name: string, waitMs = WAIT_MS): Promise<Server> {
  const until = Date.now() + waitMs;
  let said = false;
  for (;;) {
    const s = await listen(name);
    if (s) {
      s.unref();
      return s;
    }
    if (Date.now() > until)
      throw new Error(`${name}: another test run held this file's addresses for ${waitMs / 60_000} minutes`);
    if (!said) {
      process.stderr.write(`# waiting for another run of ${name} (its addresses are in use)\n`);
      said = true;
    }
    await new Promise((r) => setTimeout(r, 250));
  }
}

/**
 * The test files a process runs: the file itself, or, for a shard of scripts/run-tests.mjs (a
 * module of `import './x.test.js';` lines), each file it imports.
 */
export function filesOf(file: string, text: string): string[] {
  if (!file.endsWith('.shard.test.js')) return [file];
  return [...text.matchAll(/^import '(\.\/[^']+\.test\.js)';$/gm)].map((m) => join(dirname(file), m[1]!));
}

const file = process.env.NODE_TEST_CONTEXT ? process.argv[1] : undefined;
if (file && process.platform === 'linux') {
  for (const f of filesOf(file, readFileSync(file, 'utf8'))) {
    const rel = relative(ROOT, f);
    // Named without the extension: a file run from its sources (.ts) and compiled (.js) is one file.
    if (needsLock(rel, readFileSync(f, 'utf8'))) await takeLock(`npl-lb-test/${rel.replace(/\.[jt]s$/, '')}`);
  }
}
