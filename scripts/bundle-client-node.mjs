// The test build's node_modules (scripts/pretest.mjs): every package of the checkout linked, but
// @kubernetes/client-node as one file. Its package is about 2,800 ES modules (a model per
// Kubernetes type), and a process that imports it spends about 1.1 s of CPU resolving, reading and
// linking them; the same code bundled by esbuild, its dependencies with it, loads in about 0.35 s
// (bench/README.md, "The test suite's time"). Some 250 processes of a test run load it: the test
// files and the CLI processes they start. The bundle is the installed package's code, unchanged
// but for the module boundaries; the checkout's node_modules is never touched.
import { mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import process from 'node:process';
import { build } from 'esbuild';

const PACKAGE = '@kubernetes/client-node';

/**
 * Makes `out`/node_modules: a link to each entry of `checkout`/node_modules, and the client as a
 * package of one bundled file. Resolves once the bundle is written.
 */
export async function linkModules(checkout, out) {
  const src = join(checkout, 'node_modules');
  const dst = join(out, 'node_modules');
  const [scope, name] = PACKAGE.split('/');
  mkdirSync(join(dst, scope, name), { recursive: true });
  for (const entry of readdirSync(src)) {
    if (entry !== scope) symlinkSync(join(src, entry), join(dst, entry));
  }
  for (const entry of readdirSync(join(src, scope))) {
    if (entry !== name) symlinkSync(join(src, scope, entry), join(dst, scope, entry));
  }
  const pkgDir = join(src, scope, name);
  const pkg = JSON.parse(readFileSync(join(pkgDir, 'package.json'), 'utf8'));
  // A package the checkout depends on itself stays outside the bundle (imported from the linked
  // node_modules), so a process has one copy of it, as an installed npl-lb does: with undici
  // bundled in, the client's copy set the process's global dispatcher and a FormData of the
  // other copy was not one to it (a Data Plane certificate upload failed after the client loaded).
  const mine = JSON.parse(readFileSync(join(checkout, 'package.json'), 'utf8'));
  const ours = new Set([...Object.keys(mine.dependencies ?? {}), ...Object.keys(mine.devDependencies ?? {})]);
  const shared = Object.keys(pkg.dependencies ?? {}).filter((d) => ours.has(d) && !d.startsWith('@types/'));
  await build({
    entryPoints: [join(pkgDir, pkg.main ?? 'dist/index.js')],
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: `node${process.versions.node.split('.')[0]}`,
    minify: true,
    legalComments: 'linked',
    outfile: join(dst, scope, name, 'index.js'),
    logLevel: 'warning',
    external: shared.flatMap((d) => [d, `${d}/*`]),
    // The CommonJS dependencies bundled in still call require() for Node's own modules.
    banner: {
      js: "import { createRequire as __nplCreateRequire } from 'node:module';\nconst require = __nplCreateRequire(import.meta.url);",
    },
  });
  writeFileSync(
    join(dst, scope, name, 'package.json'),
    `${JSON.stringify({ name: pkg.name, version: pkg.version, type: 'module', main: 'index.js', license: pkg.license }, null, 2)}\n`,
  );
}
