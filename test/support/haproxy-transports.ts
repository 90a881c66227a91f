/**
 * The two transports of the HAProxy adapter side by side, for tests that hold both to the same
 * scenario with real traffic: the runtime transport on a stock HAProxy, and the Data Plane
 * transport (v2 and v3) on the simulator over a real HAProxy. `reloads()` counts HAProxy's own
 * reloads; `reload()` makes one (as a restart would); `specProblems()` holds every Data Plane
 * exchange so far to the official spec.
 */
import type { LoadBalancerAdapter } from '../../src/adapter/contract.ts';
import { startDataplaneSim } from './dataplane.ts';
import { startHaproxy } from './haproxy.ts';
import { configPath } from '../../adapters/haproxy/process.ts';
import { DataplaneClient } from '../../adapters/haproxy/dataplane/client.ts';

export interface TransportRig {
  adapter: LoadBalancerAdapter;
  reloads: () => number;
  reload: () => Promise<void>;
  specProblems: () => string[];
  /** Resolves once HAProxy has no reload queued or running. */
  idle: () => Promise<void>;
  /** A folder under which the device keeps the files it is given (certificates, CA bundles). */
  filesDir: string;
  /** The haproxy.cfg the runtime transport writes (undefined for the Data Plane API's). */
  configFile?: string;
  /** A client of the Data Plane API, for edits made by hand (undefined for the runtime transport). */
  client?: DataplaneClient;
}

export interface Transport {
  name: string;
  /** Whether a certificate a listener gains or loses past its default goes live without a reload. */
  runtimeCrtList: boolean;
  /**
   * `healthChecks`: HAProxy checks the members (off unless asked: most tests need no checks);
   * `haproxyBin`: the haproxy to run (a wrapper that runs it in a network namespace).
   */
  start(
    t: { after: (fn: () => Promise<void>) => void },
    slots?: number,
    opts?: { healthChecks?: boolean; haproxyBin?: string },
  ): Promise<TransportRig>;
}

export const TRANSPORTS: Transport[] = [
  {
    name: 'runtime transport',
    runtimeCrtList: true,
    start: async (t, _slots, opts = {}) => {
      const rig = await startHaproxy(t, undefined, opts.haproxyBin);
      const adapter = rig.adapter('e2e', { healthChecks: opts.healthChecks ?? false });
      t.after(() => adapter.close());
      return {
        adapter,
        reloads: () => adapter.stats.reloads,
        reload: () => rig.proc.reload(),
        specProblems: () => [],
        // Its reloads finish inside apply().
        idle: async () => {},
        filesDir: adapter.certDir,
        configFile: configPath(rig.paths),
      };
    },
  },
  ...(['v2', 'v3'] as const).map((v): Transport => ({
    name: `Data Plane API ${v}`,
    // v2 has no runtime crt-list endpoint.
    runtimeCrtList: v === 'v3',
    start: async (t, slots = 4, opts = {}) => {
      const rig = await startDataplaneSim(t, opts.haproxyBin ? { haproxyBin: opts.haproxyBin } : {});
      const adapter = rig.adapter('e2e', v, { slots, ...(opts.healthChecks ? { healthChecks: true } : {}) });
      const client = new DataplaneClient({
        url: rig.url,
        apiVersion: v,
        username: 'admin',
        password: 'admin',
      });
      t.after(() => client.close());
      return {
        client,
        adapter,
        reloads: () => rig.sim.stats.reloads,
        reload: () => rig.sim.proc.reload(),
        specProblems: rig.specProblems,
        idle: () => rig.sim.idle(),
        filesDir: rig.dir,
      };
    },
  })),
];
