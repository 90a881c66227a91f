/**
 * The settings of the HAProxy runtime transport (runtime-adapter.ts).
 */
import type { CoreChange as Change } from '../../src/adapter/changes.ts';
import type { Fail } from './validate.ts';

export interface HaproxyRuntimeOptions {
  owner: string;
  /** haproxy binary, for `haproxy -c` before a reload. */
  bin: string;
  configFile: string;
  adminSocket: string;
  masterSocket: string;
  bindOptions?: string;
  healthChecks?: boolean;
  /**
   * Try each new VIP:port before a reload, so a VIP HAProxy cannot bind fails alone (BindFailed)
   * instead of failing the reload. Only meaningful when this process shares HAProxy's network
   * namespace (the demo, a host install); off by default (a Pod beside a host HAProxy does not).
   */
  checkBinds?: boolean;
  /** The admin socket is written `mode 660 gid <socketGroup>` so a non-root controller in it can use it. */
  socketGroup?: number;
  /** Returns an error to fail one change with, for tests of partial failure. */
  fault?: (change: Change) => Fail | undefined;
  /** Where certificates and crt-lists are kept (default: `<configFile>.certs`). */
  certDir?: string;
}
