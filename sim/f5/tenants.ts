/**
 * The BIG-IP simulator's AS3 state: the tenants as deployed, and what AS3 does with a declaration
 * once it passed the schema. Selective updates with "no change" results; `updateMode: complete`
 * removes tenants not declared; a tenant declared empty is removed; `controls.dryRun` (or the AS3
 * request's `action: dry-run`) answers as it would deploy and changes nothing; `optimisticLockKey`
 * (shown with `showHash=true`) refuses a tenant changed since the key was read; the per-application
 * endpoints of AS3 3.47 deploy or remove single applications of a tenant, leaving the others.
 */
import { createHash } from 'node:crypto';
import { isDeepStrictEqual } from 'node:util';

type Json = Record<string, unknown>;

export interface TenantResult extends Json {
  code: number;
  message: string;
  tenant: string;
}

const isTenant = (x: unknown): x is Json => (x as Json | null)?.class === 'Tenant';
const isApp = (x: unknown): x is Json => (x as Json | null)?.class === 'Application';

/** The tenant as stored: without its lock key (AS3 computes that). */
const stored = (t: Json): Json => {
  const { optimisticLockKey: _k, ...rest } = t;
  return structuredClone(rest);
};

export class As3Tenants {
  readonly tenants = new Map<string, Json>();
  /** Declarations deployed that changed something (not dry runs, not "no change"). */
  deployed = 0;

  /** The key AS3 gives a tenant's current state (`showHash=true`). */
  lockKey(name: string): string {
    const t = this.tenants.get(name);
    return t ? createHash('sha256').update(JSON.stringify(t)).digest('hex').slice(0, 32) : '';
  }

  /** A tenant with its lock key, as `showHash=true` shows it. */
  show(name: string, showHash: boolean): Json | undefined {
    const t = this.tenants.get(name);
    return t && showHash ? { ...t, optimisticLockKey: this.lockKey(name) } : t;
  }

  /** The size in bytes of what a declaration changes (device time grows with it). */
  static size(x: unknown): number {
    return Buffer.byteLength(JSON.stringify(x ?? {}));
  }

  /** Applies each tenant of an ADC declaration; the HTTP status is 200, 207 (mixed) or 422. */
  deploy(adc: Json, dryRun: boolean): { status: number; results: TenantResult[] } {
    const results: TenantResult[] = [];
    const named = new Set<string>();
    for (const [tName, t] of Object.entries(adc)) {
      if (!isTenant(t)) continue;
      named.add(tName);
      results.push(this.deployTenant(tName, t, dryRun));
    }
    if (adc.updateMode === 'complete' && !dryRun) {
      for (const tName of [...this.tenants.keys()]) {
        if (named.has(tName)) continue;
        this.tenants.delete(tName);
        results.push({ code: 200, message: 'success', tenant: tName, host: 'localhost', runTime: 0 });
      }
    }
    return { status: statusOf(results), results };
  }

  private deployTenant(tName: string, t: Json, dryRun: boolean): TenantResult {
    const result = (code: number, message: string): TenantResult => ({
      code,
      message,
      tenant: tName,
      host: 'localhost',
      lineCount: JSON.stringify(t).length,
      runTime: 0,
      ...(dryRun ? { dryRun: true } : {}),
    });
    const key = typeof t.optimisticLockKey === 'string' ? t.optimisticLockKey : '';
    if (key !== '' && key !== this.lockKey(tName)) {
      return result(
        422,
        `the optimisticLockKey of tenant ${tName} does not match its current state: it changed since it was read; read it again (showHash=true)`,
      );
    }
    const want = stored(t);
    const before = this.tenants.get(tName);
    const hasApps = Object.values(want).some(isApp);
    if (!hasApps) {
      if (!before) return result(200, 'no change');
      if (!dryRun) this.tenants.delete(tName);
    } else if (before && isDeepStrictEqual(before, want)) return result(200, 'no change');
    else if (!dryRun) this.tenants.set(tName, want);
    if (!dryRun) this.deployed++;
    return result(200, 'success');
  }

  /** The per-application POST: these applications into the tenant (made if absent), the rest kept. */
  deployApps(tName: string, apps: Json, dryRun: boolean): { status: number; results: TenantResult[] } {
    const before = this.tenants.get(tName) ?? { class: 'Tenant' };
    const next: Json = structuredClone(before);
    let changed = false;
    for (const [aName, a] of Object.entries(apps)) {
      if (!isApp(a)) continue;
      if (!isDeepStrictEqual(next[aName], a)) changed = true;
      next[aName] = structuredClone(a);
    }
    const result: TenantResult = {
      code: 200,
      message: changed ? 'success' : 'no change',
      tenant: tName,
      host: 'localhost',
      runTime: 0,
      ...(dryRun ? { dryRun: true } : {}),
    };
    if (changed && !dryRun) {
      this.tenants.set(tName, next);
      this.deployed++;
    }
    return { status: 200, results: [result] };
  }

  /** The per-application DELETE; false when the tenant or application is not there. */
  removeApp(tName: string, aName: string): boolean {
    const t = this.tenants.get(tName);
    if (!t || !isApp(t[aName])) return false;
    const next = { ...t };
    delete next[aName];
    if (Object.values(next).some(isApp)) this.tenants.set(tName, next);
    else this.tenants.delete(tName);
    this.deployed++;
    return true;
  }

  /** A tenant's applications by name. */
  apps(tName: string): Json | undefined {
    const t = this.tenants.get(tName);
    if (!t) return undefined;
    return Object.fromEntries(Object.entries(t).filter(([, a]) => isApp(a)));
  }
}

function statusOf(results: TenantResult[]): number {
  if (results.length === 0 || results.every((r) => r.code < 300)) return 200;
  return results.some((r) => r.code < 300) ? 207 : 422;
}

/** Whether version a is older than b (dotted numbers). */
export { versionBelow as olderThan } from '../../src/model/versions.ts';
