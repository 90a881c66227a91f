/** The in-memory load balancer as a vendor of the registry (adapters/index.ts): dry runs and tests. */
import type { Vendor } from '../../src/adapter/vendor.ts';
import { MemoryAdapter } from './adapter.ts';

export const memoryVendor: Vendor = {
  type: 'memory',
  settings: [],
  summary: 'No other field: the in-memory load balancer of dry runs and tests.',
  create: (c) => new MemoryAdapter({ owner: c.owner }),
};
