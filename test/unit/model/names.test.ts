import assert from 'node:assert/strict';
import { it } from 'node:test';
import { l4Name, limitName, MAX_NAME, poolName } from '../../../src/model/names.ts';

it('names are deterministic, AKO-shaped, and length-limited without collisions', () => {
  assert.equal(l4Name('c1', 'default', 'web', 'TCP', 80), 'c1--default-web-TCP-80');
  assert.equal(poolName('c1', 'default', 'web', 'http'), 'c1--default-web-http');
  const long = 'x'.repeat(100);
  const a = limitName(`${long}-a`);
  const b = limitName(`${long}-b`);
  assert.equal(a.length, MAX_NAME);
  assert.notEqual(a, b);
  assert.equal(limitName(`${long}-a`), a, 'stable');
});
