/**
 * Issue 46, items 3-4: YAML from outside read in linear time, within limits, one typed error per
 * failure. The duplicate-key check is one pass (the `yaml` package's own compares every key with
 * every other); JSON texts take JSON.parse; aliases, depth and size are bounded.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parse } from 'yaml';
import {
  parseYamlDocument,
  parseYamlDocuments,
  textNestsDeeperThan,
  YamlInputError,
  type YamlProblem,
} from '../../../src/runtime/yaml-input.ts';

const problem = (fn: () => unknown): YamlProblem | undefined => {
  try {
    fn();
    return undefined;
  } catch (err) {
    assert.ok(err instanceof YamlInputError, String(err));
    assert.ok(!err.message.includes('\n'), 'one line');
    return err.problem;
  }
};

const LAUGHS = [
  'a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]',
  ...'bcdefghi'.split('').map((k, i) => `${k}: &${k} [${Array(9).fill(`*${'abcdefghi'[i]}`).join(',')}]`),
].join('\n');

describe('YAML input', () => {
  it('reads what the yaml package reads, block and flow, several documents, JSON, __proto__ as data', () => {
    const texts = [
      'a: 1\nb: [x, y]\nc: {d: e}\n',
      'apiVersion: v1\nkind: ConfigMap\ndata:\n  k: "v"\n  n: "1"\n',
      '- a\n- b\n',
      '{"a": {"b": [1, 2, {"c": null}]}, "d": "e"}',
      'a: &x {b: 1}\nc: *x\n',
      '# only a comment\n',
    ];
    for (const t of texts) assert.deepEqual(parseYamlDocument(t), parse(t) ?? undefined, t);
    assert.deepEqual(parseYamlDocuments('a: 1\n---\nb: 2\n---\n'), [{ a: 1 }, { b: 2 }]);
    const proto = parseYamlDocument('__proto__: x\nb: {__proto__: y}\n') as Record<string, unknown>;
    assert.deepEqual(Object.keys(proto), ['__proto__', 'b']);
    assert.equal(Object.getPrototypeOf(proto), Object.prototype, 'never a prototype');
    assert.equal(
      problem(() => parseYamlDocument('a: 1\n---\nb: 2\n')),
      'syntax',
      'one document expected',
    );
  });

  it('a duplicate key is refused wherever it is, with its line', () => {
    assert.equal(
      problem(() => parseYamlDocument('a: 1\nb: 2\na: 3\n')),
      'duplicate-key',
    );
    assert.equal(
      problem(() => parseYamlDocument('x:\n  y: {p: 1, p: 2}\n')),
      'duplicate-key',
    );
    assert.throws(() => parseYamlDocument('a: 1\nb: 2\na: 3\n'), /\(3:1\)/, 'with its line');
    assert.equal(
      problem(() => parseYamlDocument('a: {p: 1}\nb: {p: 2}\n')),
      undefined,
      'same key, two maps',
    );
  });

  it('bounded: aliases (billion laughs), depth (block, flow and JSON), size', () => {
    assert.equal(
      problem(() => parseYamlDocument(LAUGHS)),
      'aliases',
    );
    const deepJson = `${'['.repeat(200_000)}${']'.repeat(200_000)}`;
    assert.equal(
      problem(() => parseYamlDocument(deepJson)),
      'depth',
    );
    const deepFlow = `a: ${'['.repeat(5000)}${']'.repeat(5000)}`;
    assert.equal(
      problem(() => parseYamlDocument(deepFlow)),
      'depth',
    );
    const deepBlock = Array.from({ length: 1100 }, (_, i) => `${' '.repeat(i)}k:`).join('\n');
    assert.equal(
      problem(() => parseYamlDocument(deepBlock)),
      'depth',
    );
    assert.equal(
      problem(() => parseYamlDocument('a: 1\n', { maxBytes: 3, maxDepth: 10, maxAliases: 1 })),
      'size',
    );
    assert.equal(
      problem(() => parseYamlDocument('a: [unclosed\n')),
      'syntax',
    );
    // A bracket inside a string is not nesting.
    assert.equal(textNestsDeeperThan(JSON.stringify({ s: '['.repeat(5000) }), 10), false);
    // Aliases of scalars expand to nothing: served.
    assert.deepEqual(parseYamlDocument('a: &x 1\nb: *x\n'), { a: 1, b: 1 });
  });
});
