/** HAProxy as a vendor of the registry (adapters/index.ts): two transports, credentials, section, adapter. */
import type { Vendor } from '../../src/adapter/vendor.ts';
import { HAPROXY_CHART_VALUES } from './chart-values.ts';
import { HAPROXY_DEMO } from './demo.ts';
import { HAPROXY_PARAMETERS } from './parameters.ts';
import { haproxyAdapter, haproxyDataplaneSchema, haproxyRuntimeSchema } from './settings.ts';

export const haproxyVendor: Vendor = {
  type: 'haproxy',
  settings: [
    { title: '`type: haproxy`, `transport: runtime` (the default transport)', schema: haproxyRuntimeSchema },
    { title: '`type: haproxy`, `transport: dataplane`', schema: haproxyDataplaneSchema },
  ],
  // The Data Plane API's; the runtime transport needs none.
  credentials: 'HAPROXY',
  parameters: HAPROXY_PARAMETERS,
  chart: HAPROXY_CHART_VALUES,
  demo: HAPROXY_DEMO,
  create: (c) => haproxyAdapter(c.owner, c.settings, c.env),
};
