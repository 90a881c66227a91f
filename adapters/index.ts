/**
 * The vendor registry: one line per vendor folder (its `Vendor`, src/adapter/vendor.ts), as
 * external-dns lists its providers. Everything the core knows of a vendor comes from here: the
 * adapter it makes, its `adapter:` block (the configuration reference), its credentials and its
 * section of LoadBalancerParameters (its adapters' Capabilities).
 */
import type { LoadBalancerAdapter } from '../src/adapter/contract.ts';
import type { AdapterConfig, Vendor } from '../src/adapter/vendor.ts';
import { ErrorCodes, NplError } from '../src/runtime/errors.ts';
import { aviVendor } from './avi/vendor.ts';
import { f5Vendor } from './f5/vendor.ts';
import { haproxyVendor } from './haproxy/vendor.ts';
import { memoryVendor } from './memory/vendor.ts';

export type { AdapterConfig, Vendor };

export const VENDORS: readonly Vendor[] = [memoryVendor, aviVendor, f5Vendor, haproxyVendor];

/** The adapter of `config.settings.type` among `vendors`; an unknown type is a configuration error. */
export function makeAdapter(
  config: AdapterConfig,
  vendors: readonly Vendor[] = VENDORS,
): LoadBalancerAdapter {
  const v = vendors.find((x) => x.type === config.settings.type);
  if (!v)
    throw new NplError(
      ErrorCodes.CONFIG_INVALID,
      `adapter.type: unknown adapter "${config.settings.type}" (known: ${vendors.map((x) => x.type).join(', ')})`,
    );
  return v.create(config);
}
