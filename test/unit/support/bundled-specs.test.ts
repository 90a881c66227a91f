/**
 * Tests read only what the repository holds: the Data Plane API specs are bundled. When the
 * workspace's shared/ folder is beside the checkout, the bundle must equal it.
 */
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { it } from 'node:test';
import { ROOT } from '../../support/cli-process.ts';
import { bundledSpecPath } from '../../support/dataplane-spec.ts';

for (const v of ['v2', 'v3'] as const) {
  const shared = join(ROOT, '..', 'shared', 'specs', 'haproxy', `dataplaneapi-${v}.yaml`);
  it(
    `the bundled Data Plane API ${v} spec is the published one`,
    { skip: !existsSync(shared) && 'no ../shared/specs here' },
    () => {
      assert.equal(readFileSync(bundledSpecPath(v), 'utf8'), readFileSync(shared, 'utf8'));
    },
  );
  it(`the Data Plane API ${v} spec is in the repository`, () => {
    assert.match(readFileSync(bundledSpecPath(v), 'utf8').slice(0, 2000), /swagger|openapi/);
  });
}
