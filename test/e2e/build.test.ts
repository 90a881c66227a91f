/**
 * What users install: `npm run build` compiles to dist/, and the tarball `npm pack` produces (the
 * same one the Dockerfile installs) installs into an empty folder, where `npl-lb --version` and
 * `npl-lb sandbox` run. One file, so the two builds never race over dist/. The build only emits
 * (`tsc --noCheck`, a few seconds): the type check is `npm run typecheck`, which `npm test` runs
 * first and `npm pack` runs before the build (prepack).
 */
import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { eventually } from '../support/sandbox.ts';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const run = promisify(execFile);

/** Whether this file's first test built dist/ (the pack test then packs it without building again). */
let built = false;

it('npm run build compiles to dist/ and the built npl-lb runs', async () => {
  await run('npm', ['run', 'build'], { cwd: ROOT, timeout: 180_000 });
  built = true;
  const { stdout } = await run(process.execPath, ['dist/src/main/cli.js', 'sandbox', '--help'], {
    cwd: ROOT,
  });
  assert.match(stdout, /Usage: npl-lb sandbox/);
  const { OpenApi } = (await import(`${ROOT}dist/src/sandbox/openapi.js`)) as {
    OpenApi: new () => { v3Keys(): string[] };
  };
  assert.ok(new OpenApi().v3Keys().includes('api/v1'), 'the bundled OpenAPI document ships in dist/');
});

it('the packed tarball installs into an empty folder; npl-lb --version and npl-lb sandbox run from it', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'npl-pack-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const packed = join(dir, 'packed');
  const app = join(dir, 'app');
  for (const d of [packed, app]) await run('mkdir', ['-p', d]);
  // `npm pack` type-checks and builds first (prepack); when the test above has just built dist/
  // from this very tree, which npm test's own type check passed, that is skipped.
  await run('npm', ['pack', '--pack-destination', packed, ...(built ? ['--ignore-scripts'] : [])], {
    cwd: ROOT,
    timeout: 240_000,
  });
  const [tarball] = readdirSync(packed).filter((f) => f.endsWith('.tgz'));
  assert.ok(tarball, 'npm pack wrote a tarball');
  const { version } = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string };
  assert.equal(tarball, `npl-lb-${version}.tgz`);
  writeFileSync(join(app, 'package.json'), JSON.stringify({ name: 'empty', private: true }));
  await run('npm', ['install', '--omit=dev', '--no-audit', '--no-fund', join(packed, tarball)], {
    cwd: app,
    timeout: 240_000,
  });
  const bin = join(app, 'node_modules', '.bin', 'npl-lb');
  const { stdout } = await run(bin, ['--version'], { cwd: app });
  assert.equal(stdout, `npl-lb ${version}\n`);
  const installed = join(app, 'node_modules', 'npl-lb');
  for (const f of ['LICENSE', 'README.md', 'dist/src/main/cli.js', 'dist/adapters/f5/schema']) {
    assert.ok(readdirSync(join(installed, f, '..')).includes(f.split('/').pop()!), `${f} is in the package`);
  }
  assert.ok(!readdirSync(installed).includes('test'), 'tests are not shipped');
  // The sandbox answers a request from the installed package (its OpenAPI document included).
  const child = spawn(bin, ['sandbox', '--port', '0'], { cwd: app, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (out += d.toString()));
  t.after(() => {
    if (child.exitCode === null) child.kill('SIGKILL');
  });
  await eventually(
    () => /sandbox listening on (http:\/\/127\.0\.0\.1:\d+)/.test(out),
    20_000,
    'sandbox listening',
  );
  const url = /sandbox listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(out)![1]!;
  const res = await fetch(`${url}/openapi/v3`);
  assert.equal(res.status, 200);
  assert.ok(((await res.json()) as { paths: Record<string, unknown> }).paths['api/v1']);
  // A protobuf body, as kubectl create sends: the protobuf definitions ship in the package too.
  // k8s\0, then Unknown{typeMeta{apiVersion: v1, kind: Namespace}, raw: Namespace{metadata{name: pb}}}.
  const typeMeta = Buffer.concat([
    Buffer.from([0x0a, 2]),
    Buffer.from('v1'),
    Buffer.from([0x12, 9]),
    Buffer.from('Namespace'),
  ]);
  const ns = Buffer.from([0x0a, 4, 0x0a, 2, 0x70, 0x62]);
  const created = await fetch(`${url}/api/v1/namespaces`, {
    method: 'POST',
    headers: { 'content-type': 'application/vnd.kubernetes.protobuf' },
    body: Buffer.concat([
      Buffer.from('k8s\0', 'latin1'),
      Buffer.from([0x0a, typeMeta.length]),
      typeMeta,
      Buffer.from([0x12, ns.length]),
      ns,
    ]),
  });
  assert.equal(created.status, 201, await created.text());
  child.kill('SIGTERM');
  await new Promise((r) => child.once('exit', r));
});
