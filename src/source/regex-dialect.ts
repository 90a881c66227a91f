/**
 * Regular expressions a load balancer reads in its own dialect. Devices that compile them with
 * PCRE2 (`Capabilities.http.regexMatches`) do not read JavaScript's RegExp alike: `[^]` is "any character" to JavaScript and an unterminated class
 * to PCRE2, `\u0041` compiles in JavaScript and is an error in PCRE2, `\v` is a character to one
 * and a class to the other, lookbehinds must have a fixed length in PCRE2. No maintained PCRE2
 * binding is published for Node (the one package, `pcre2` 0.1.1, is proprietary with a single
 * release), so a value is accepted for such a device only when it is in the subset both dialects
 * read alike, checked here by a small parser: literals and escaped punctuation; `.`, `^`, `$`;
 * `\d \D \w \W \s \S \b \B \n \r \t \f`; classes with ranges and those escapes; groups `( )`,
 * `(?: )`, named `(?<name> )`, lookaheads `(?= )` `(?! )`; alternation; the quantifiers `* + ?`
 * and `{n}` `{n,}` `{n,m}`, lazy or not. Everything else (other escapes, lookbehinds, inline
 * flags, POSIX classes, backreferences, possessive quantifiers, non-ASCII text) is refused with
 * what it found, so the route that holds it is refused before any device sees it. The tests hold
 * the subset to a real PCRE2 device's own check (test/unit/source/regex-dialect.test.ts). Pure.
 */

const CLASS_ESCAPES = new Set(['d', 'D', 'w', 'W', 's', 'S', 'n', 'r', 't', 'f']);
const ATOM_ESCAPES = new Set([...CLASS_ESCAPES, 'b', 'B']);
const PUNCT = /^[!-/:-@[-`{-~]$/;

/** Why `re` is outside the subset ECMAScript and PCRE2 read alike; undefined when it is inside. */
export function pcre2Problem(re: string): string | undefined {
  const nonAscii = /[^\x20-\x7e]/.exec(re);
  if (nonAscii)
    return `character ${JSON.stringify(nonAscii[0])} at ${nonAscii.index}: only printable ASCII is read alike by PCRE2`;
  let i = 0;
  let depth = 0;
  /** Whether the last token can take a quantifier. */
  let quantifiable = false;
  const bad = (what: string) =>
    `${what} at ${i} is not read alike by PCRE2 (the load balancer's regular expressions)`;
  while (i < re.length) {
    const c = re[i]!;
    if (c === '\\') {
      const e = re[i + 1];
      if (e === undefined) return bad('a trailing backslash');
      if (!ATOM_ESCAPES.has(e) && !PUNCT.test(e)) return bad(`the escape \\${e}`);
      quantifiable = e !== 'b' && e !== 'B';
      i += 2;
    } else if (c === '[') {
      const end = classEnd(re, i);
      if (typeof end === 'string') return bad(end);
      i = end;
      quantifiable = true;
    } else if (c === '(') {
      const head = /^\((\?(?::|=|!|<[A-Za-z_][A-Za-z0-9_]{0,31}>))?/.exec(re.slice(i))![0];
      if (re[i + 1] === '?' && head === '(') return bad(`the group ${JSON.stringify(re.slice(i, i + 4))}`);
      depth++;
      i += head.length;
      quantifiable = false;
    } else if (c === ')') {
      if (depth === 0) return bad('an unmatched )');
      depth--;
      i++;
      quantifiable = true;
    } else if (c === '*' || c === '+' || c === '?' || c === '{') {
      if (!quantifiable) return bad(`the quantifier ${c} with nothing to repeat`);
      const q = c === '{' ? /^\{(\d{1,4})(,(\d{1,4})?)?\}/.exec(re.slice(i)) : [c];
      if (!q) return bad('a { that is not a quantifier {n}, {n,} or {n,m}');
      i += q[0]!.length;
      if (re[i] === '?') i++;
      if (re[i] === '+') return bad('a possessive quantifier');
      if (re[i] === '*' || re[i] === '?' || re[i] === '{') return bad('a quantifier of a quantifier');
      quantifiable = false;
    } else if (c === '}' || c === ']') {
      return bad(`an unescaped ${c}`);
    } else {
      quantifiable = c !== '^' && c !== '$' && c !== '|';
      i++;
    }
  }
  if (depth > 0) return 'an unclosed group: not read alike by PCRE2';
  return undefined;
}

/** The index after the class that starts at `start`, or what in it is not read alike. */
function classEnd(re: string, start: number): number | string {
  let i = start + 1;
  if (re[i] === '^') i++;
  if (re[i] === ']') return 'a class that starts with ] ([] or [^])';
  for (; i < re.length; i++) {
    const c = re[i]!;
    if (c === ']') return i + 1;
    if (c === '[') return 'a [ inside a class (POSIX classes differ)';
    if (c === '\\') {
      const e = re[i + 1];
      if (e === undefined || (!CLASS_ESCAPES.has(e) && !PUNCT.test(e)))
        return `the escape \\${e ?? ''} inside a class`;
      i++;
    }
  }
  return 'an unterminated class';
}
