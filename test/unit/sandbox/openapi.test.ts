import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { RESOURCE_TYPES } from '../../../src/sandbox/kinds.ts';
import { OpenApi } from '../../../src/sandbox/openapi.ts';
import { extractServed, type SwaggerDoc } from '../../../src/sandbox/openapi-extract.ts';
import { SHARED } from '../../support/cli-process.ts';

const SHARED_SWAGGER = join(SHARED, 'specs/kubernetes/swagger.json');

describe('bundled OpenAPI document', () => {
  it('is exactly the served cut of ../shared/specs/kubernetes/swagger.json', (t) => {
    if (!existsSync(SHARED_SWAGGER)) {
      t.skip('../shared/specs is not beside this checkout');
      return;
    }
    const full = JSON.parse(readFileSync(SHARED_SWAGGER, 'utf8')) as SwaggerDoc;
    const bundled = new OpenApi().doc;
    assert.deepEqual(
      bundled,
      JSON.parse(JSON.stringify(extractServed(full))),
      'run: npx tsx scripts/extract-openapi.ts',
    );
  });

  it('has a definition for every served kind', () => {
    const api = new OpenApi();
    for (const t of RESOURCE_TYPES) assert.ok(api.definition(t.definition), t.definition);
  });

  it('converts to OpenAPI v3 with requestBody and components, without dangling v2 references', () => {
    const api = new OpenApi();
    assert.deepEqual(api.v3Keys(), [
      'api/v1',
      'apis/admissionregistration.k8s.io/v1',
      'apis/apiextensions.k8s.io/v1',
      'apis/apps/v1',
      'apis/batch/v1',
      'apis/coordination.k8s.io/v1',
      'apis/discovery.k8s.io/v1',
      'apis/events.k8s.io/v1',
      'apis/networking.k8s.io/v1',
      'apis/policy/v1',
      'apis/rbac.authorization.k8s.io/v1',
    ]);
    const text = api.v3Doc('apis/networking.k8s.io/v1')!;
    assert.ok(!text.includes('#/definitions/'));
    assert.ok(!text.includes('#/parameters/'));
    const doc = JSON.parse(text) as { paths: Record<string, { post?: { requestBody?: unknown } }> };
    assert.ok(doc.paths['/apis/networking.k8s.io/v1/namespaces/{namespace}/ingresses']!.post!.requestBody);
  });
});
