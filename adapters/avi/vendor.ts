/** Avi as a vendor of the registry (adapters/index.ts): its settings, credentials, section, adapter. */
import type { Vendor } from '../../src/adapter/vendor.ts';
import { AviAdapter } from './adapter.ts';
import { aviOptions, aviSettingsSchema } from './config.ts';
import { AVI_CHART_VALUES } from './chart-values.ts';
import { AVI_PARAMETERS } from './parameters.ts';
import { AKO_MIGRATION } from './migrate/source.ts';

export const aviVendor: Vendor = {
  type: 'avi',
  settings: [{ title: '`type: avi`', schema: aviSettingsSchema }],
  credentials: 'AVI',
  parameters: AVI_PARAMETERS,
  chart: AVI_CHART_VALUES,
  migrations: [AKO_MIGRATION],
  create: (c) => new AviAdapter(aviOptions(c.owner, c.settings, c.env)),
};
