/**
 * The haproxy section of the Helm chart's values (`adapter.haproxy`), as values.schema.json holds it: the
 * chart's schema is generated from the registry (src/main/chart-schema.ts, scripts/chart-schema.ts).
 */
import type { VendorChartValues } from '../../src/adapter/vendor.ts';

export const HAPROXY_CHART_VALUES: VendorChartValues = {
  section: 'haproxy',
  schema: {
    type: 'object',
    additionalProperties: false,
    properties: {
      transport: {
        enum: ['runtime', 'dataplane'],
      },
      hostPath: {
        type: 'string',
        pattern: '^/',
      },
      configFile: {
        type: 'string',
        pattern: '^/',
      },
      adminSocket: {
        type: 'string',
        pattern: '^/',
      },
      masterSocket: {
        type: 'string',
        pattern: '^/',
      },
      healthChecks: {
        type: 'boolean',
      },
      url: {
        type: 'string',
      },
      apiVersion: {
        enum: ['v2', 'v3'],
      },
      slots: {
        type: 'integer',
        minimum: 1,
        maximum: 1000,
      },
      transparentBinds: {
        type: 'boolean',
      },
      insecureSkipVerify: {
        type: 'boolean',
      },
      nodeSelector: {
        type: 'object',
        additionalProperties: {
          type: 'string',
        },
      },
      socketGroup: {
        type: 'integer',
        minimum: 0,
        maximum: 2147483647,
      },
      caBundle: {
        type: 'string',
        pattern: '^(|-----BEGIN CERTIFICATE-----[\\s\\S]*)$',
      },
    },
    if: {
      properties: {
        transport: {
          const: 'dataplane',
        },
      },
    },
    then: {
      required: ['url'],
      properties: {
        url: {
          pattern: '^https?://',
        },
      },
    },
  },
};
