/**
 * Issue 50's house rule for the core's sources and controller: no function longer than 80 lines
 * (declarations, methods, constructors, accessors, arrows and function expressions alike), read
 * from the TypeScript sources of the checkout with the compiler's own parser.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, it } from 'node:test';
import ts from 'typescript';
import { CHECKOUT } from '../../support/cli-process.ts';

const LIMIT = 80;

/** Every function of a source text longer than `limit` lines: `file:line name (n lines)`. */
function longFunctions(text: string, file: string, limit: number): string[] {
  const sf = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const out: string[] = [];
  const visit = (n: ts.Node): void => {
    if (
      ts.isFunctionDeclaration(n) ||
      ts.isMethodDeclaration(n) ||
      ts.isConstructorDeclaration(n) ||
      ts.isGetAccessorDeclaration(n) ||
      ts.isSetAccessorDeclaration(n) ||
      ts.isArrowFunction(n) ||
      ts.isFunctionExpression(n)
    ) {
      const from = sf.getLineAndCharacterOfPosition(n.getStart(sf)).line;
      const to = sf.getLineAndCharacterOfPosition(n.getEnd()).line;
      const name = 'name' in n && n.name ? (n.name as ts.Node).getText(sf) : '(anonymous)';
      if (to - from + 1 > limit) out.push(`${file}:${from + 1} ${name} (${to - from + 1} lines)`);
    }
    ts.forEachChild(n, visit);
  };
  visit(sf);
  return out;
}

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = join(dir, e.name);
    if (e.isDirectory()) return sources(p);
    return e.name.endsWith('.ts') && !e.name.endsWith('.d.ts') ? [p] : [];
  });
}

describe('no function over 80 lines in src/source and src/controller (issue 50)', () => {
  it('holds for every source file there', () => {
    const files = ['src/source', 'src/controller'].flatMap((d) => sources(join(CHECKOUT, d)));
    assert.ok(files.length > 50, `read the sources (${files.length} files)`);
    const found = files.flatMap((f) => longFunctions(readFileSync(f, 'utf8'), relative(CHECKOUT, f), LIMIT));
    assert.deepEqual(found, []);
  });

  it('the check finds a long function of each kind, and passes a short one', () => {
    const body = (n: number) => Array.from({ length: n }, (_, i) => `  x += ${i};`).join('\n');
    const long = [
      `function a() {\n${body(LIMIT)}\n}`,
      `class B {\n  m() {\n${body(LIMIT)}\n  }\n}`,
      `const c = () => {\n${body(LIMIT)}\n};`,
      `const d = function () {\n${body(LIMIT)}\n};`,
    ];
    for (const text of long) assert.equal(longFunctions(text, 'f.ts', LIMIT).length, 1, text.slice(0, 20));
    assert.deepEqual(longFunctions(`function e() {\n${body(LIMIT - 2)}\n}`, 'f.ts', LIMIT), []);
  });
});
