/** BIG-IP (AS3) as a vendor of the registry (adapters/index.ts): settings, credentials, section, adapter. */
import type { Vendor } from '../../src/adapter/vendor.ts';
import { F5Adapter } from './adapter.ts';
import { f5Options, f5SettingsSchema } from './config.ts';
import { F5_CHART_VALUES } from './chart-values.ts';
import { F5_PARAMETERS } from './parameters.ts';
import { CIS_MIGRATION } from './migrate/source.ts';

export const f5Vendor: Vendor = {
  type: 'f5',
  settings: [{ title: '`type: f5`', schema: f5SettingsSchema }],
  credentials: 'F5',
  parameters: F5_PARAMETERS,
  chart: F5_CHART_VALUES,
  migrations: [CIS_MIGRATION],
  create: (c) => new F5Adapter(f5Options(c.owner, c.settings, c.env)),
};
