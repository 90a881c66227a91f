/**
 * A Data Plane API simulator on a real HAProxy in a temporary directory, recording every exchange
 * so that a test can hold them to the official specs, and adapters of the `dataplane` transport.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  HaproxyDataplaneAdapter,
  type HaproxyDataplaneOptions,
} from '../../adapters/haproxy/dataplane/adapter.ts';
import type { ApiVersion } from '../../adapters/haproxy/dataplane/models.ts';
import {
  DataplaneSimulator,
  type DataplaneSimOptions,
  type Exchange,
} from '../../sim/haproxy-dataplane/simulator.ts';
import { DataplaneSpec } from './dataplane-spec.ts';

export interface DataplaneRig {
  sim: DataplaneSimulator;
  url: string;
  /** The simulator's working directory (its storage is `storage/` in it). */
  dir: string;
  exchanges: Exchange[];
  adapter(
    owner: string,
    apiVersion: ApiVersion,
    extra?: Partial<HaproxyDataplaneOptions>,
  ): HaproxyDataplaneAdapter;
  /** Spec problems of every exchange so far ([] when all conform). */
  specProblems(): string[];
}

const specs = new Map<ApiVersion, DataplaneSpec>();
export function specFor(v: ApiVersion): DataplaneSpec {
  let s = specs.get(v);
  if (!s) specs.set(v, (s = new DataplaneSpec(v)));
  return s;
}

export async function startDataplaneSim(
  t: { after: (fn: () => Promise<void>) => void },
  opts: Pick<DataplaneSimOptions, 'beforeRequest'> & { haproxyBin?: string } = {},
): Promise<DataplaneRig> {
  const dir = mkdtempSync(join(tmpdir(), 'npl-dataplane-'));
  const exchanges: Exchange[] = [];
  const sim = new DataplaneSimulator({
    workDir: dir,
    onExchange: (x) => exchanges.push(x),
    ...opts,
    haproxyBin: opts.haproxyBin ?? 'haproxy',
  });
  const adapters: HaproxyDataplaneAdapter[] = [];
  t.after(async () => {
    try {
      for (const a of adapters) await a.close().catch(() => undefined);
      await sim.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
  const url = await sim.start();
  return {
    sim,
    url,
    dir,
    exchanges,
    adapter: (owner, apiVersion, extra = {}) => {
      const a = new HaproxyDataplaneAdapter({
        owner,
        url,
        apiVersion,
        username: 'admin',
        password: 'admin',
        slots: 4,
        healthChecks: false,
        transparentBinds: true,
        ...extra,
      });
      adapters.push(a);
      return a;
    },
    specProblems: () =>
      exchanges.flatMap((x) => specFor(x.path.startsWith('/v2') ? 'v2' : 'v3').check(x)).slice(0, 20),
  };
}

/** Runs every cleanup even when some fail, then throws the first failure. */
export async function runAll(cleanups: (() => Promise<void>)[]): Promise<void> {
  let first: unknown;
  for (const f of cleanups) {
    try {
      await f();
    } catch (err) {
      first ??= err;
    }
  }
  if (first !== undefined) throw first;
}
