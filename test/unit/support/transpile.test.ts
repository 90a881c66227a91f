/**
 * scripts/transpile.mjs: the test build's JavaScript by esbuild. Relative `.ts` specifiers become
 * `.js` in static imports, re-exports, side-effect imports and literal dynamic imports, as tsc's
 * rewriteRelativeImportExtensions does; nothing else is touched. A small tree transpiled runs.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
// @ts-expect-error: a plain .mjs script without types
import * as script from '../../../scripts/transpile.mjs';

const rewrite = script.rewriteSpecifiers as (code: string) => string;
const transpileTree = script.transpileTree as (root: string, out: string) => Promise<{ files: number }>;

describe('the test build transpile (scripts/transpile.mjs)', () => {
  it('rewrites relative .ts specifiers of imports only', () => {
    const cases: [string, string][] = [
      ['import { a } from "./a.ts";', 'import { a } from "./a.js";'],
      ['export * from "../b/c.ts";', 'export * from "../b/c.js";'],
      ['import "./side.ts";', 'import "./side.js";'],
      ['const m = await import("./lazy.ts");', 'const m = await import("./lazy.js");'],
      ['import x from "pkg.ts";', 'import x from "pkg.ts";'],
      ['import y from "/abs/y.ts";', 'import y from "/abs/y.ts";'],
      ['const s = "./not-an-import.ts";', 'const s = "./not-an-import.ts";'],
      ['log("from ./a.ts");', 'log("from ./a.ts");'],
      ['import z from "./z.tsx";', 'import z from "./z.tsx";'],
    ];
    for (const [input, want] of cases) assert.equal(rewrite(input), want, input);
  });

  it('a tree transpiled beside its sources runs, types stripped', async (t) => {
    const dir = mkdtempSync(join(tmpdir(), 'npl-transpile-'));
    t.after(() => rmSync(dir, { recursive: true, force: true }));
    writeFileSync(join(dir, 'tsconfig.json'), JSON.stringify({ include: ['src'] }));
    mkdirSync(join(dir, 'src', 'lib'), { recursive: true });
    writeFileSync(
      join(dir, 'src', 'lib', 'add.ts'),
      'export const add = (a: number, b: number): number => a + b;\n',
    );
    writeFileSync(join(dir, 'src', 'lib', 'types.d.ts'), 'export type Never = never;\n');
    writeFileSync(
      join(dir, 'src', 'main.ts'),
      [
        "import { add } from './lib/add.ts';",
        "import type { Never } from './lib/types.d.ts';",
        'class Box { constructor(private readonly v: number) {} get value(): number { return this.v; } }',
        "const lazy = await import('./lib/add.ts');",
        'const n: Never | undefined = undefined;',
        'console.log(add(1, 2), new Box(4).value, lazy.add(2, 3), n);',
      ].join('\n'),
    );
    const { files } = await transpileTree(dir, dir);
    assert.equal(files, 2, 'the two .ts files, not the .d.ts');
    assert.doesNotMatch(readFileSync(join(dir, 'src', 'main.js'), 'utf8'), /\.ts"/);
    assert.equal(
      execFileSync(process.execPath, [join(dir, 'src', 'main.js')], { encoding: 'utf8' }),
      '3 4 5 undefined\n',
    );
  });
});
