/**
 * Tests read only what the repository holds: the Data Plane API specs are bundled. When the
 * workspace's shared/ folder is beside the checkout, the bundle must equal it.
 */
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { it } from 'node:test';
import { parse } from 'yaml';
import { SHARED } from '../../support/cli-process.ts';
import { bundledSpecPath } from '../../support/dataplane-spec.ts';

for (const v of ['v2', 'v3'] as const) {
  const shared = join(SHARED, 'specs', 'haproxy', `dataplaneapi-${v}.yaml`);
  it(
    `the bundled Data Plane API ${v} spec is the published one`,
    { skip: !existsSync(shared) && 'no ../shared/specs here' },
    () => {
      assert.equal(readFileSync(bundledSpecPath(v), 'utf8'), readFileSync(shared, 'utf8'));
    },
  );
  const json = bundledSpecPath(v).replace(/\.yaml$/, '.json');
  it(
    `the JSON of the ${v} spec that npm test's build writes is the YAML's document`,
    { skip: !existsSync(json) && 'run from the sources: no JSON written beside the spec' },
    () => {
      assert.deepEqual(
        JSON.parse(readFileSync(json, 'utf8')),
        parse(readFileSync(bundledSpecPath(v), 'utf8')),
      );
    },
  );
  it(`the bundled Data Plane API ${v} spec parses and declares every operation the adapter uses`, () => {
    const doc = parse(readFileSync(bundledSpecPath(v), 'utf8')) as {
      swagger: string;
      basePath: string;
      paths: Record<string, Record<string, unknown>>;
    };
    assert.equal(doc.swagger, '2.0');
    assert.equal(doc.basePath, `/${v}`);
    const used: [string, string][] = [
      ['get', '/services/haproxy/configuration/version'],
      ['post', '/services/haproxy/transactions'],
      ['put', '/services/haproxy/transactions/{id}'],
      ['delete', '/services/haproxy/transactions/{id}'],
      ['get', '/services/haproxy/reloads/{id}'],
      [
        'get',
        v === 'v2' ? '/services/haproxy/configuration/backends' : '/services/haproxy/configuration/backends',
      ],
      ['post', '/services/haproxy/configuration/backends'],
      ['get', '/services/haproxy/configuration/frontends'],
      [
        'get',
        v === 'v2'
          ? '/services/haproxy/runtime/servers'
          : '/services/haproxy/runtime/backends/{parent_name}/servers',
      ],
    ];
    const missing = used.filter(([m, path]) => !doc.paths[path]?.[m]).map(([m, path]) => `${m} ${path}`);
    assert.deepEqual(missing, []);
    assert.ok(Object.keys(doc.paths).length > 100, 'the whole spec, not a stub');
  });
}
