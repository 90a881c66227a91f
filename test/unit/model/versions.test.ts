/** Dotted versions compared as numbers, the build suffix included (AS3's 3.56.0-7). */
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { versionBelow } from '../../../src/model/versions.ts';

it('compares part by part as numbers; a missing part counts 0; equal is not below', () => {
  assert.equal(versionBelow('3.9.0', '3.47.0'), true, 'numbers, not text');
  assert.equal(versionBelow('22.1.3', '30.2.1'), true);
  assert.equal(versionBelow('31.2.1', '22.1.3'), false);
  assert.equal(versionBelow('22.1', '22.1.0'), false);
  assert.equal(versionBelow('22.1.3', '22.1.3'), false);
  assert.equal(versionBelow('3.56.0-7', '3.56.0-12'), true, 'the build suffix counts');
  assert.equal(versionBelow('3.56.0-7', '3.47.0'), false);
});
