/**
 * Which change a problem of a batch belongs to: a virtual service whose pool would be missing
 * (the change that causes it fails instead), and AS3's error lines mapped to the changes that made
 * the objects they name.
 */
import type { AdapterErrorCode } from '../../src/adapter/errors.ts';
import type { ApplyError } from '../../src/adapter/contract.ts';
import type { CoreChange as Change } from '../../src/adapter/changes.ts';
import type { Pool, VirtualService } from '../../src/model/types.ts';
import { isOurApp } from './declaration.ts';

export type Outcome = { ok: true } | { ok: false; error: ApplyError };

/** Virtual services whose pools would be missing: the change that causes it fails instead. */
export function dependencyProblems(
  changes: Change[],
  outcome: Map<number, Outcome>,
  pools: Map<string, Pool>,
  vss: Map<string, VirtualService>,
): { index: number; code: AdapterErrorCode; message: string; terminal: boolean }[] {
  const out: { index: number; code: AdapterErrorCode; message: string; terminal: boolean }[] = [];
  const failedPool = (name: string) => {
    const i = changes.findIndex((c) => c.kind === 'pool' && c.name === name);
    return i >= 0 ? outcome.get(i) : undefined;
  };
  for (const vs of vss.values()) {
    const used =
      vs.kind === 'l4'
        ? [vs.pool]
        : [...vs.routes.map((r) => r.pool), ...(vs.defaultPool ? [vs.defaultPool] : [])];
    const missing = used.find((p) => !pools.has(p));
    if (!missing) continue;
    const vsChange = changes.findIndex(
      (c, i) => !outcome.has(i) && c.kind === 'virtualService' && c.name === vs.name,
    );
    const poolDelete = changes.findIndex(
      (c, i) => !outcome.has(i) && c.kind === 'pool' && c.op === 'delete' && c.name === missing,
    );
    const poolFailure = failedPool(missing);
    const terminal = poolFailure && !poolFailure.ok ? poolFailure.error.terminal : true;
    if (vsChange >= 0) {
      out.push({
        index: vsChange,
        code: 'DependencyFailed',
        message: `its pool ${missing} is not on the device`,
        terminal,
      });
    } else if (poolDelete >= 0) {
      out.push({
        index: poolDelete,
        code: 'InUse',
        message: `pool ${missing} is still used by ${vs.name}`,
        terminal: false,
      });
    }
  }
  return out;
}

/** Maps AS3 error lines ("/tenant/app/object/...: message") to the changes that made the objects. */
export function blame(
  tenant: string,
  lines: string[],
  objectOf: Map<string, number>,
  outcome: Map<number, Outcome>,
): { index: number; message: string }[] {
  const out = new Map<number, string>();
  for (const line of lines) {
    const m = /^\/?(?:declaration\/)?([^/:\s]+)\/([^/:\s]+)\/([^/:\s]+)/.exec(line);
    if (!m || m[1] !== tenant || !isOurApp(m[2]!)) continue;
    const i = objectOf.get(m[3]!);
    if (i !== undefined && !outcome.has(i) && !out.has(i)) out.set(i, line);
  }
  return [...out].map(([index, message]) => ({ index, message }));
}
