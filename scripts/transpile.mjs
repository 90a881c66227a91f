// The test build's JavaScript, made by esbuild instead of tsc's emit: each TypeScript file of the
// folders tsconfig.json includes gets its JavaScript beside it in the mirror, file by file (no
// bundling), with relative `.ts` import specifiers rewritten to `.js` as tsc's
// rewriteRelativeImportExtensions does. Types are stripped, not checked: the type check
// (`tsc --noEmit`) runs beside the tests instead (lint.mjs), so the tests no longer wait for it.
// tsc's emit took about 20 s of one core before any test could start; this takes about one.
import { readdirSync, readFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { build } from 'esbuild';

/** The folders tsconfig.json's `include` names: what tsc would have emitted. */
export function includedDirs(root) {
  const config = JSON.parse(readFileSync(join(root, 'tsconfig.json'), 'utf8'));
  return config.include;
}

function tsFiles(dir) {
  const out = [];
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) out.push(...tsFiles(p));
    else if (e.name.endsWith('.ts') && !e.name.endsWith('.d.ts')) out.push(p);
  }
  return out;
}

/**
 * Relative specifiers ending in `.ts` in static imports and exports and in dynamic imports of a
 * string literal, as esbuild prints them (double quotes), made `.js`. Specifiers computed at run
 * time are left as they are (tsc's helper would rewrite a relative one; none here is relative).
 */
export function rewriteSpecifiers(code) {
  return code.replace(
    /(\bfrom\s*|\bimport\s*\(\s*|\bimport\s+)"(\.{1,2}\/[^"\n]*?)\.ts"/g,
    (_, head, path) => `${head}"${path}.js"`,
  );
}

/** Writes each included `.ts` file's JavaScript beside it under `out` (a mirror of `root`). */
export async function transpileTree(root, out) {
  const entryPoints = includedDirs(root).flatMap((d) => tsFiles(join(out, d)));
  const result = await build({
    entryPoints,
    outdir: out,
    outbase: out,
    bundle: false,
    write: false,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    logLevel: 'silent',
    // What of tsconfig.json changes the emitted code (ES2022 class fields, imports kept as written).
    tsconfigRaw: { compilerOptions: { verbatimModuleSyntax: true, useDefineForClassFields: true } },
  });
  await Promise.all(result.outputFiles.map((f) => writeFile(f.path, rewriteSpecifiers(f.text))));
  return { files: result.outputFiles.length, from: relative(root, out) };
}
