/**
 * The f5 section of the Helm chart's values (`adapter.f5`), as values.schema.json holds it: the
 * chart's schema is generated from the registry (src/main/chart-schema.ts, scripts/chart-schema.ts).
 */
import type { VendorChartValues } from '../../src/adapter/vendor.ts';

export const F5_CHART_VALUES: VendorChartValues = {
  section: 'f5',
  schema: {
    type: 'object',
    additionalProperties: false,
    properties: {
      url: {
        type: 'string',
      },
      tenant: {
        type: 'string',
        pattern: '^([A-Za-z][0-9A-Za-z_.-]{0,63})?$',
      },
      declarations: {
        type: 'string',
        enum: ['auto', 'tenant', 'application'],
      },
      insecureSkipVerify: {
        type: 'boolean',
      },
      caBundle: {
        type: 'string',
        pattern: '^(|-----BEGIN CERTIFICATE-----[\\s\\S]*)$',
      },
    },
  },
  whenSelected: {
    required: ['url'],
    properties: {
      url: {
        pattern: '^https?://',
      },
    },
  },
};
