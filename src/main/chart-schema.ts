/**
 * The `adapter` part of the Helm chart's values.schema.json, generated from the vendor registry:
 * `type` one of the registered vendors, each vendor's own section (`adapter.<section>`), and what a
 * section must hold when its vendor is the one selected. `npx tsx scripts/chart-schema.ts` writes
 * it into the chart; a test holds the committed file to this output.
 */
import type { Vendor } from '../adapter/vendor.ts';

export function chartAdapterSchema(vendors: readonly Vendor[]): Record<string, unknown> {
  const sections = vendors.flatMap((v) => (v.chart ? [v.chart] : []));
  return {
    type: 'object',
    additionalProperties: false,
    required: ['type'],
    properties: {
      type: { enum: vendors.map((v) => v.type) },
      ...Object.fromEntries(sections.map((c) => [c.section, c.schema])),
    },
    allOf: vendors.flatMap((v) =>
      v.chart?.whenSelected
        ? [
            {
              if: { properties: { type: { const: v.type } } },
              then: { properties: { [v.chart.section]: v.chart.whenSelected } },
            },
          ]
        : [],
    ),
  };
}
