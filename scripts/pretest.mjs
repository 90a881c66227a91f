// Run by `npm test` before the tests: the tree the tests run from, and the lint (the type check,
// eslint, prettier --check) beside it unless --no-lint (npm test passes it: run-tests.mjs --lint
// runs the lint beside the tests instead). The repository is mirrored into .test-build/ (every
// file, the TypeScript sources too, as tests read them) with each .ts file's JavaScript beside it
// (transpile.mjs: esbuild, types stripped), so that the test files and the processes they start
// run plain JavaScript. Under tsx every module a process loads goes through its loader thread:
// loading the Kubernetes client alone cost 2.9 s of CPU there against 1.3 s plain, in each of
// about 300 processes (bench/README.md, "The test suite's time"). Its node_modules links the
// checkout's packages but for that client, bundled into one file (bundle-client-node.mjs), and the
// Data Plane API specs get a JSON copy beside their YAML. The mirror is made anew on each run;
// nothing in it is edited by hand. `--no-lint --typecheck`: the type check without eslint and
// prettier (npm run test:unit).
import {
  cpSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import process from 'node:process';
import { fileURLToPath, URL } from 'node:url';
import { parse as parseYaml } from 'yaml';
import { linkModules } from './bundle-client-node.mjs';
import { lintJobs, typeCheckJob } from './lint.mjs';
import { transpileTree } from './transpile.mjs';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const OUT = join(ROOT, '.test-build');
/** Not mirrored: dependencies and tools are linked; build outputs and scratch are not the tree's. */
const SKIP = new Set(['.git', '.test-build', 'node_modules', '.tools', 'dist', 'test-artifacts', '.npl-lb']);

const lint = !process.argv.includes('--no-lint');
const started = Date.now();

rmSync(OUT, { recursive: true, force: true });
mkdirSync(OUT);
for (const name of readdirSync(ROOT)) {
  if (SKIP.has(name) || name.startsWith('.stub-vendor-')) continue;
  cpSync(join(ROOT, name), join(OUT, name), { recursive: true });
}
// The Data Plane API specs the tests hold exchanges to, as JSON beside the YAML (the same
// document: test/support/dataplane-spec.ts reads the JSON when it is there).
const SPECS = join(OUT, 'test', 'support', 'specs', 'haproxy');
for (const name of readdirSync(SPECS).filter((n) => n.endsWith('.yaml'))) {
  const doc = parseYaml(readFileSync(join(SPECS, name), 'utf8'));
  writeFileSync(join(SPECS, name.replace(/\.yaml$/, '.json')), JSON.stringify(doc));
}
// kubectl and helm are unpacked once into the checkout's .tools/, shared with the mirror.
mkdirSync(join(ROOT, '.tools'), { recursive: true });
symlinkSync(join(ROOT, '.tools'), join(OUT, '.tools'), 'dir');

const jobs = [
  linkModules(ROOT, OUT).then(
    () => ({ name: 'client-node bundle', code: 0, out: '' }),
    (err) => ({ name: 'client-node bundle', code: 1, out: `${err?.stack ?? err}\n` }),
  ),
  transpileTree(ROOT, OUT).then(
    ({ files }) => ({ name: `transpile (${files} files)`, code: 0, out: '' }),
    (err) => ({ name: 'transpile', code: 1, out: `${err?.stack ?? err}\n` }),
  ),
];
if (lint) jobs.push(...lintJobs(ROOT));
else if (process.argv.includes('--typecheck')) jobs.push(typeCheckJob(ROOT));
const results = await Promise.all(jobs);
let failed = false;
for (const r of results) {
  if (r.code !== 0) process.stdout.write(`# ${r.name}\n${r.out}`);
  if (r.code !== 0) {
    process.stderr.write(`pretest: ${r.name} failed (exit ${r.code})\n`);
    failed = true;
  }
}
if (!existsSync(join(OUT, 'test', 'support', 'file-lock.js'))) {
  process.stderr.write('pretest: the type check emitted no JavaScript into .test-build/\n');
  failed = true;
}
if (failed) process.exit(1);
process.stdout.write(
  `pretest: ${results.map((r) => r.name).join(', ')} passed; .test-build/ in ${Date.now() - started} ms\n`,
);
