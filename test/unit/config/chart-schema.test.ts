/**
 * The chart's values.schema.json takes its `adapter` part from the vendor registry: the committed
 * file is what src/main/chart-schema.ts makes of the registered vendors (`npx tsx
 * scripts/chart-schema.ts` rewrites it), and a vendor's section and its rules when selected come
 * from its folder alone.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { VENDORS } from '../../../adapters/index.ts';
import type { Vendor } from '../../../src/adapter/vendor.ts';
import { chartAdapterSchema } from '../../../src/main/chart-schema.ts';

const committed = JSON.parse(
  readFileSync(new URL('../../../deploy/helm/npl-lb/values.schema.json', import.meta.url), 'utf8'),
) as { properties: { adapter: unknown } };

describe("the chart's values schema from the vendor registry", () => {
  it('the committed adapter part is the generated one (run npx tsx scripts/chart-schema.ts)', () => {
    assert.deepEqual(committed.properties.adapter, chartAdapterSchema(VENDORS));
  });

  it("a vendor's section and its rules when selected are its folder's", () => {
    const extra: Vendor = {
      type: 'nginx',
      settings: [],
      chart: {
        section: 'nginx',
        schema: { type: 'object', properties: { url: { type: 'string' } } },
        whenSelected: { required: ['url'] },
      },
      create: () => {
        throw new Error('not made here');
      },
    };
    const s = chartAdapterSchema([...VENDORS, extra]) as {
      properties: Record<string, { enum?: string[] }>;
      allOf: { if: unknown; then: { properties: Record<string, unknown> } }[];
    };
    assert.deepEqual(s.properties.type!.enum, ['memory', 'avi', 'f5', 'haproxy', 'nginx']);
    assert.deepEqual(s.properties.nginx, extra.chart!.schema);
    assert.deepEqual(s.allOf.at(-1), {
      if: { properties: { type: { const: 'nginx' } } },
      then: { properties: { nginx: { required: ['url'] } } },
    });
    // memory has no section: the type alone.
    assert.equal(s.properties.memory, undefined);
  });
});
