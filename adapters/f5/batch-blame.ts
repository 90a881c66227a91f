/**
 * Which change a problem of a batch belongs to: a virtual service whose pool or certificate would be missing
 * (the change that causes it fails instead), and AS3's error lines mapped to the changes that made
 * the objects they name.
 */
import type { AdapterErrorCode } from '../../src/adapter/errors.ts';
import type { ApplyError } from '../../src/adapter/contract.ts';
import type { Change } from '../../src/adapter/changes.ts';
import type { Certificate, Pool, VirtualService } from '../../src/model/types.ts';
import { poolRefs } from '../../src/model/refs.ts';
import { missingDependency } from '../../src/adapter/preflight.ts';
import { checkMonitorName, isOurApp, ownedObjectNames } from './declaration.ts';
import { l4Persistence, persistenceProblem } from './persistence.ts';
import { poolCaName, poolTlsName, splitTlsProblem } from './pool-tls.ts';
import { preflightProblem } from './preflight.ts';
import { mapOf, type OwnedObjects } from './tenant-layout.ts';

export type Outcome = { ok: true } | { ok: false; error: ApplyError };

/**
 * Virtual services whose pools or certificates would be missing: the change that causes it fails
 * instead (the virtual service's, or the delete of what it still uses).
 */
export function dependencyProblems(
  changes: Change[],
  outcome: Map<number, Outcome>,
  owned: { pools: Map<string, Pool>; vss: Map<string, VirtualService>; certs: Map<string, Certificate> },
): { index: number; code: AdapterErrorCode; message: string; terminal: boolean }[] {
  const out: { index: number; code: AdapterErrorCode; message: string; terminal: boolean }[] = [];
  const failed = (kind: 'pool' | 'certificate', name: string) => {
    const i = changes.findIndex((c) => c.kind === kind && c.name === name);
    return i >= 0 ? outcome.get(i) : undefined;
  };
  // A pool presenting a client certificate to its members points at it.
  for (const p of owned.pools.values()) {
    const cert = p.backendTls?.clientCertificate;
    if (!cert || owned.certs.has(cert)) continue;
    const poolChange = changes.findIndex((c, i) => !outcome.has(i) && c.kind === 'pool' && c.name === p.name);
    const removal = changes.findIndex(
      (c, i) => !outcome.has(i) && c.kind === 'certificate' && c.op === 'delete' && c.name === cert,
    );
    const failure = failed('certificate', cert);
    if (poolChange >= 0)
      out.push({
        index: poolChange,
        code: 'DependencyFailed',
        message: `its certificate ${cert} is not on the device`,
        terminal: failure && !failure.ok ? failure.error.terminal : false,
      });
    else if (removal >= 0)
      out.push({
        index: removal,
        code: 'InUse',
        message: `certificate ${cert} is still presented by pool ${p.name}`,
        terminal: false,
      });
  }
  for (const vs of owned.vss.values()) {
    const dep = missingDependency(vs, {
      pool: (p) => owned.pools.has(p),
      certificate: (c) => owned.certs.has(c),
    });
    if (!dep) continue;
    const { kind, name: missing } = dep;
    const vsChange = changes.findIndex(
      (c, i) => !outcome.has(i) && c.kind === 'virtualService' && c.name === vs.name,
    );
    const removal = changes.findIndex(
      (c, i) => !outcome.has(i) && c.kind === kind && c.op === 'delete' && c.name === missing,
    );
    const failure = failed(kind, missing);
    const terminal = failure && !failure.ok ? failure.error.terminal : true;
    if (vsChange >= 0) {
      out.push({
        index: vsChange,
        code: 'DependencyFailed',
        message: `its ${kind} ${missing} is not on the device`,
        terminal,
      });
    } else if (removal >= 0) {
      out.push({
        index: removal,
        code: 'InUse',
        message: `${kind} ${missing} is still used by ${vs.name}`,
        terminal: false,
      });
    }
  }
  return out;
}

/**
 * Virtual services whose pools ask persistence BIG-IP cannot give them at once (AS3 keeps it on
 * the virtual server, or on a rule), or a weighted rule whose backends ask different TLS (its pool
 * holds all their members): the virtual service's change fails, else that of a pool it uses
 * (whose persistence or TLS made it so).
 */
export function persistenceProblems(
  changes: Change[],
  outcome: Map<number, Outcome>,
  owned: { pools: Map<string, Pool>; vss: Map<string, VirtualService> },
): { index: number; message: string }[] {
  const out: { index: number; message: string }[] = [];
  for (const vs of owned.vss.values()) {
    const problem =
      vs.kind === 'l7'
        ? (persistenceProblem(vs, owned.pools) ?? splitTlsProblem(vs, owned.pools))
        : l4Persistence(vs, owned.pools) === 'mixed'
          ? `the pools of ${vs.name} ask different persistence; BIG-IP keeps one per virtual server`
          : undefined;
    if (!problem) continue;
    const used = new Set(poolRefs(vs));
    const open = (i: number) => !outcome.has(i) && changes[i]!.op !== 'delete';
    const own = changes.findIndex((c, i) => open(i) && c.kind === 'virtualService' && c.name === vs.name);
    const index =
      own >= 0 ? own : changes.findIndex((c, i) => open(i) && c.kind === 'pool' && used.has(c.name));
    if (index >= 0) out.push({ index, message: problem });
  }
  return out;
}

/**
 * Which change made each object an AS3 error line can name: a pool's change its pool, monitor, TLS
 * profile and CA bundle; a virtual service's change every object it is made of.
 */
export function changeOfObject(changes: Change[]): Map<string, number> {
  const out = new Map<string, number>();
  changes.forEach((c, i) => {
    const names =
      c.kind === 'pool'
        ? [c.name, checkMonitorName(c.name), poolTlsName(c.name), poolCaName(c.name)]
        : c.kind === 'virtualService'
          ? ownedObjectNames(c.op === 'delete' ? c.observed : c.desired)
          : [c.name];
    for (const n of names) out.set(n, i);
  });
  return out;
}

/** Maps AS3 error lines ("/tenant/app/object/...: message") to the changes that made the objects. */
export function blame(
  tenants: ReadonlySet<string>,
  lines: string[],
  objectOf: Map<string, number>,
  outcome: Map<number, Outcome>,
): { index: number; message: string }[] {
  const out = new Map<number, string>();
  for (const line of lines) {
    const m = /^\/?(?:declaration\/)?([^/:\s]+)\/([^/:\s]+)\/([^/:\s]+)/.exec(line);
    if (!m || !tenants.has(m[1]!) || !isOurApp(m[2]!)) continue;
    const i = objectOf.get(m[3]!);
    if (i !== undefined && !outcome.has(i) && !out.has(i)) out.set(i, line);
  }
  return [...out].map(([index, message]) => ({ index, message }));
}

/** A change to fail, and how. */
export interface BatchProblem {
  index: number;
  code: AdapterErrorCode;
  message: string;
  terminal: boolean;
}

/**
 * Before the batch renders: what the preflight refuses (alone, by name), and an update of an
 * object that is not on the device (it will be created on the next pass).
 */
export function batchPrecheck(changes: Change[], start: OwnedObjects): BatchProblem[] {
  const out: BatchProblem[] = [];
  changes.forEach((c, i) => {
    const bad = preflightProblem(c);
    if (bad) out.push({ index: i, code: 'Invalid', message: bad, terminal: true });
    else if (c.op === 'update' && !mapOf(start, c.kind).has(c.name))
      out.push({
        index: i,
        code: 'NotFound',
        message: `${c.kind} ${c.name} is not on the device; it will be created on the next pass`,
        terminal: false,
      });
  });
  return out;
}

/** Our objects on the device with the batch's open changes made to them (a copy, `owned`). */
export function withChanges(
  owned: OwnedObjects,
  changes: Change[],
  outcome: Map<number, Outcome>,
): OwnedObjects {
  changes.forEach((c, i) => {
    if (outcome.has(i)) return;
    const map = mapOf(owned, c.kind);
    if (c.op === 'delete') map.delete(c.name);
    else map.set(c.name, c.desired);
  });
  return owned;
}

/**
 * What stops the batch from rendering: a missing dependency (dependencyProblems), else persistence
 * or TLS BIG-IP cannot say at once (persistenceProblems). Each round fails these and renders again.
 */
export function renderProblems(
  changes: Change[],
  outcome: Map<number, Outcome>,
  owned: OwnedObjects,
): BatchProblem[] {
  const broken = dependencyProblems(changes, outcome, owned);
  if (broken.length > 0) return broken;
  return persistenceProblems(changes, outcome, owned).map((b) => ({ ...b, code: 'Invalid', terminal: true }));
}
