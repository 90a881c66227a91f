/**
 * What a load-balancer vendor's folder registers (adapters/index.ts, one line per vendor), in the
 * manner of external-dns's providers: how its `adapter:` block is read, where its credentials
 * come from, its section of LoadBalancerParameters, and how an adapter is made. The core reads
 * vendors only through this: it names none.
 */
import type { z } from 'zod';
import type { LoadBalancerAdapter } from './contract.ts';
import type { MigrationSource } from '../migrate/source.ts';
import type { Logger } from '../runtime/logger.ts';

export interface AdapterConfig {
  /** The configured clusterName: the owner mark on the load balancer. */
  owner: string;
  /** The `adapter:` block of the controller config, `type` included. */
  settings: { type: string } & Record<string, unknown>;
  env: NodeJS.ProcessEnv;
}

/** One shape of a vendor's `adapter:` block (a vendor with two transports has two). */
export interface VendorSettings {
  /** The heading in the configuration reference (`type: <vendor>`, and its transport if it has two). */
  title: string;
  schema: z.ZodType;
}

export type { VendorParameters } from './contract.ts';
import type { VendorParameters } from './contract.ts';

/**
 * A vendor's section of the Helm chart's values (`adapter.<section>`), for values.schema.json:
 * its JSON schema, and what it must hold when `adapter.type` names the vendor.
 */
export interface VendorChartValues {
  section: string;
  schema: Record<string, unknown>;
  whenSelected?: Record<string, unknown>;
}

/** What `npl-lb demo` is given to start a vendor's device on loopback (`Vendor.demo`). */
export interface DemoStart {
  /** The values of the vendor's own demo flags. */
  flags: Record<string, string>;
  /** A directory of its own for the device's files. */
  dir: string;
  log: Logger;
  /** Where to add what stops and removes what it started. */
  cleanups: (() => Promise<void> | void)[];
  /** The device died (the controller holds its writes and says why). */
  failed(why: string): void;
  /** The device was started again after it died. */
  restarted(): void;
}

/** A device the demo can run on this machine, carrying real traffic on loopback. */
export interface VendorDemo {
  /** Its flags of `npl-lb demo` (string flags: the binary it runs). */
  flags: Record<string, { description: string; default: string }>;
  /** The device started, with what the banner says of it; or why it cannot run here. */
  start(o: DemoStart): Promise<{ adapter: LoadBalancerAdapter; note: string } | { missing: string }>;
}

export interface Vendor {
  /** `adapter.type` naming it. */
  type: string;
  /** Its `adapter:` blocks; none: the type alone (`summary` says what it is). */
  settings: VendorSettings[];
  summary?: string;
  /**
   * The word of its credentials' environment names (`NPL_LB_<word>_USERNAME`, `_PASSWORD`, which
   * the chart fills from a Secret); absent: it needs none.
   */
  credentials?: string;
  parameters?: VendorParameters;
  /** Its section of the chart's values; absent: the chart takes `adapter.type` alone. */
  chart?: VendorChartValues;
  /** The controllers `npl-lb migrate` brings users of this vendor over from (the vendor's own). */
  migrations?: readonly MigrationSource[];
  /** The device `npl-lb demo` runs when it is installed here (one vendor offers it). */
  demo?: VendorDemo;
  create(config: AdapterConfig): LoadBalancerAdapter;
}
