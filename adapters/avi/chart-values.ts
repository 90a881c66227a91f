/**
 * The avi section of the Helm chart's values (`adapter.avi`), as values.schema.json holds it: the
 * chart's schema is generated from the registry (src/main/chart-schema.ts, scripts/chart-schema.ts).
 */
import type { VendorChartValues } from '../../src/adapter/vendor.ts';

export const AVI_CHART_VALUES: VendorChartValues = {
  section: 'avi',
  schema: {
    type: 'object',
    additionalProperties: false,
    properties: {
      url: {
        type: 'string',
      },
      controllerVersion: {
        type: 'string',
        pattern: '^\\d+\\.\\d+\\.\\d+$',
      },
      tenant: {
        type: 'string',
        minLength: 1,
      },
      cloud: {
        type: 'string',
        minLength: 1,
      },
      serviceEngineGroup: {
        type: 'string',
        minLength: 1,
      },
      vrf: {
        type: 'string',
        minLength: 1,
      },
      insecureSkipVerify: {
        type: 'boolean',
      },
      concurrency: {
        type: 'integer',
        minimum: 1,
        maximum: 64,
      },
      gracefulDisableTimeoutSeconds: {
        type: 'integer',
        minimum: -1,
        maximum: 432000,
      },
      vipNetwork: {
        type: 'object',
        additionalProperties: false,
        properties: {
          name: {
            type: 'string',
            maxLength: 255,
          },
          cidr: {
            type: 'string',
            pattern:
              '^(|((25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])\\.){3}(25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])/([0-9]|[1-2][0-9]|3[0-2]))$',
          },
          cidr6: {
            type: 'string',
            pattern:
              '^(|(([0-9a-fA-F]{1,4}:){7}[0-9a-fA-F]{1,4}|([0-9a-fA-F]{1,4}:){1,7}:|([0-9a-fA-F]{1,4}:){1,6}:[0-9a-fA-F]{1,4}|([0-9a-fA-F]{1,4}:){1,5}(:[0-9a-fA-F]{1,4}){1,2}|([0-9a-fA-F]{1,4}:){1,4}(:[0-9a-fA-F]{1,4}){1,3}|([0-9a-fA-F]{1,4}:){1,3}(:[0-9a-fA-F]{1,4}){1,4}|([0-9a-fA-F]{1,4}:){1,2}(:[0-9a-fA-F]{1,4}){1,5}|[0-9a-fA-F]{1,4}:(:[0-9a-fA-F]{1,4}){1,6}|:((:[0-9a-fA-F]{1,4}){1,7}|:))/(12[0-8]|1[01][0-9]|[1-9]?[0-9]))$',
          },
        },
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
