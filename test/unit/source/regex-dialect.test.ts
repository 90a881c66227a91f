/**
 * The regular-expression subset ECMAScript and PCRE2 read alike (src/source/regex-dialect.ts):
 * a table of what it takes and refuses, and, with HAProxy installed, the real PCRE2 of `haproxy -c`
 * as the judge: every generated expression the subset takes compiles there, and the expressions
 * JavaScript compiles but PCRE2 refuses (`[^]`, `\u0041`, ...) are refused by the subset too.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { haproxyBinMissing } from '../../support/haproxy.ts';
import { quoteArg } from '../../../adapters/haproxy/encode.ts';
import { pcre2Problem } from '../../../src/source/regex-dialect.ts';
import { regexProblem } from '../../../src/source/validate.ts';

const haproxyMissing = haproxyBinMissing();

const TAKEN = [
  '^/api/v[0-9]+/users$',
  'abc',
  '(?:a|b)*c+?',
  '[a-z0-9._-]{1,8}',
  '\\d{3}-\\w+\\s?',
  '(?<id>[0-9]+)x',
  'foo(?=bar)',
  'foo(?!bar)',
  '\\.\\*\\[\\]\\{\\}',
  '[^/]+',
  '.*',
  'a{2,}',
  '\\bword\\b',
];
const REFUSED: [string, RegExp][] = [
  ['[^]', /class that starts with \]/],
  ['[]', /class that starts with \]/],
  ['\\u0041', /escape \\u/],
  ['\\x41', /escape \\x/],
  ['\\p{L}', /escape \\p/],
  ['\\v', /escape \\v/],
  ['\\0', /escape \\0/],
  ['(a)\\1', /escape \\1/],
  ['(?<=a)b', /group/],
  ['(?<!a)b', /group/],
  ['(?i)abc', /group/],
  ['[[:alpha:]]', /\[ inside a class/],
  ['a*+', /possessive/],
  ['{', /nothing to repeat/],
  ['a{,3}', /not a quantifier/],
  ['a}', /unescaped \}/],
  ['(a', /unclosed group/],
  ['a)', /unmatched \)/],
  ['é', /printable ASCII/],
  ['a\\', /trailing backslash/],
];

describe('regular expressions PCRE2 reads as JavaScript does', () => {
  it('takes the common forms', () => {
    for (const re of TAKEN) assert.equal(pcre2Problem(re), undefined, re);
  });

  it('refuses what PCRE2 reads otherwise, saying what it found', () => {
    for (const [re, why] of REFUSED) assert.match(pcre2Problem(re) ?? '', why, re);
  });

  it('regexProblem applies the dialect only for a PCRE2 device', () => {
    assert.equal(regexProblem('[^]'), undefined, 'JavaScript compiles it');
    assert.match(regexProblem('[^]', 'pcre2') ?? '', /not read alike by PCRE2/);
    assert.match(regexProblem('(', 'pcre2') ?? '', /does not compile/);
  });

  it(
    'haproxy -c compiles every expression the subset takes, and refuses the JavaScript-only ones',
    { skip: haproxyMissing },
    () => {
      const atom = fc.oneof(
        fc.constantFrom(
          'a',
          'Z',
          '0',
          '/',
          '-',
          '_',
          '.',
          '\\.',
          '\\d',
          '\\w',
          '\\s',
          '\\/',
          '[a-z]',
          '[^/]',
          '[\\]x]',
        ),
        fc.stringMatching(/^[a-z]{1,3}$/),
      );
      const quant = fc.constantFrom('', '*', '+', '?', '*?', '{2}', '{1,3}', '{2,}');
      const piece = fc.tuple(atom, quant).map(([a, q]) => a + q);
      const seq = fc.array(piece, { minLength: 1, maxLength: 4 }).map((xs) => xs.join(''));
      const expr = fc
        .tuple(
          seq,
          fc.option(seq, { nil: undefined }),
          fc.constantFrom('', '(?:', '(', '(?=', '(?<g>'),
          fc.boolean(),
        )
        .map(([a, b, open, anchor]) => {
          const body = b === undefined ? a : `${a}|${b}`;
          const grouped = open ? `${open}${body})` : body;
          return anchor ? `^${grouped}$` : grouped;
        });
      const taken = fc.sample(expr, { numRuns: 150, seed: 7 });
      for (const re of taken) assert.equal(pcre2Problem(re), undefined, re);
      const dir = mkdtempSync(join(tmpdir(), 'npl-regex-'));
      const file = join(dir, 'h.cfg');
      const cfg = (res: string[]) =>
        [
          'defaults',
          '    mode http',
          '    timeout client 1s',
          '    timeout server 1s',
          '    timeout connect 1s',
          'frontend f',
          '    bind 127.0.0.1:18998',
          ...res.map((re, i) => `    acl a${i} path -m reg ${quoteArg(`^(?:${re})$`)}`),
          '    default_backend b',
          'backend b',
          '    server s 127.0.0.1:1',
          '',
        ].join('\n');
      const ok = (res: string[]) => {
        writeFileSync(file, cfg(res));
        try {
          execFileSync('haproxy', ['-c', '-q', '-f', file], { stdio: 'pipe' });
          return true;
        } catch {
          return false;
        }
      };
      try {
        assert.ok(ok(taken), 'PCRE2 compiles every expression of the subset');
        // The ones JavaScript compiles and PCRE2 refuses: each refused by the subset as well.
        for (const re of ['[^]', '\\u0041', '[^]\\u0041']) {
          new RegExp(re);
          assert.equal(ok([re]), false, `haproxy refuses ${re}`);
          assert.notEqual(pcre2Problem(re), undefined, `the subset refuses ${re}`);
        }
        // Both compile it, but read it otherwise (JavaScript: an empty class, then "a]"): refused.
        assert.ok(ok(['[]a]']));
        assert.match(pcre2Problem('[]a]') ?? '', /starts with \]/);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  );
});
