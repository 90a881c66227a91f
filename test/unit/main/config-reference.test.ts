import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { it } from 'node:test';
import { configurationReference } from '../../../src/main/config-reference.ts';

it('docs/configuration.md is what the zod schemas generate (run scripts/config-reference.ts)', () => {
  const doc = readFileSync(new URL('../../../docs/configuration.md', import.meta.url), 'utf8');
  assert.equal(doc, configurationReference());
  for (const field of [
    '`clusterName`',
    '`vip.cidrs`',
    '`adapter.caFile`',
    '`adapter.socketGroup`',
    '`adapter.slots`',
  ])
    assert.ok(doc.includes(field), `${field} is documented`);
});

it('every field of the reference, top level and every adapter, says what it means', () => {
  const rows = configurationReference()
    .split('\n')
    .filter((l) => l.startsWith('| `'));
  assert.ok(rows.length > 50);
  const blank = rows.filter((l) => (l.split('|')[5] ?? '').trim() === '').map((l) => l.split('|')[1]!.trim());
  assert.deepEqual(blank, [], 'fields without a meaning');
});
