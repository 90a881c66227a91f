import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { it } from 'node:test';
import { ErrorCodes } from '../../../src/runtime/errors.ts';

it('docs/errors.md lists exactly the error codes the code defines', () => {
  const doc = readFileSync(new URL('../../../docs/errors.md', import.meta.url), 'utf8');
  const documented = [...doc.matchAll(/^\| `(NPL_[A-Z_]+)`\s*\|/gm)].map((m) => m[1]).sort();
  assert.deepEqual(documented, Object.values(ErrorCodes).sort());
});
