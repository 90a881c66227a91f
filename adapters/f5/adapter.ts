/**
 * The F5 BIG-IP adapter, on AS3. Our tenants are rendered from the model and posted as one
 * declaration (or, on AS3 3.47 and later, only the applications that changed): our own tenant, and
 * the partitions of classes placed by LoadBalancerParameters (tenant-layout.ts). Changes that
 * arrive while a declaration is in flight wait and go out together in the next one (one
 * declaration in flight per BIG-IP, the newest state wins). Every declaration is validated against
 * the AS3 schema before it is sent: an object that fails is left out and reported (terminal), with
 * anything that depends on it; the rest goes. A tenant that did not change is not posted.
 */
import { isDeepStrictEqual } from 'node:util';
import type { AdapterErrorCode } from '../../src/adapter/errors.ts';
import {
  AdapterCheckError,
  type ApplyResult,
  type Capabilities,
  type LoadBalancerAdapter,
  type MemberHealth,
} from '../../src/adapter/contract.ts';
import type { Change, Observed } from '../../src/adapter/changes.ts';
import { validateAs3, AS3_SCHEMA_VERSION, warmAs3Validator } from './as3-validate.ts';
import { DECLARE, type DeclareRequest, postDeclaration, type DeclareOutcome } from './as3-declare.ts';
import { appChanges, type OwnedObjects, renderTenants, settled, tenantsOf } from './tenant-layout.ts';
import { infoSchema, MIN_AS3_VERSION, PER_APP_AS3_VERSION, versionNumber } from './as3-versions.ts';

export { MIN_AS3_VERSION, PER_APP_AS3_VERSION } from './as3-versions.ts';
import { iRuleSizeProblems } from './irule-size.ts';
import {
  batchPrecheck,
  blame,
  changeOfObject,
  type Outcome,
  renderProblems,
  withChanges,
} from './batch-blame.ts';
import { F5_CAPABILITIES } from './capabilities.ts';
import { membersHealth } from './icontrol-view.ts';
import { BigIpClient, type BigIpClientOptions, F5Error } from './client.ts';
import { type Json, parseDeclaration } from './declaration.ts';

export interface F5AdapterOptions extends BigIpClientOptions {
  owner: string;
  /** The partition our objects live in (default npl_lb_<owner>). */
  tenant?: string;
  /** How often to poll an asynchronous declaration's task, and for how long at most. */
  taskPollMs?: number;
  taskTimeoutMs?: number;
  /**
   * `auto` (default): per-application declarations where AS3 has them (3.47 and later), whole
   * tenants before; `tenant`: always whole tenants; `application`: per application (AS3 3.47+).
   */
  declarations?: 'auto' | 'tenant' | 'application';
}

export const defaultTenant = (owner: string): string => `npl_lb_${owner.replace(/[^0-9A-Za-z_]/g, '_')}`;

interface Pending {
  changes: Change[];
  resolve: (r: ApplyResult[]) => void;
  reject: (e: unknown) => void;
}

export class F5Adapter implements LoadBalancerAdapter {
  readonly name = 'f5';
  readonly owner: string;
  readonly tenant: string;
  readonly client: BigIpClient;
  /**
   * Every tenant as the device has it, our own among them (undefined: not known, read them first):
   * partitions of ours are rendered from it, others' objects in them carried through.
   */
  private tenants: Map<string, Json> | undefined;
  private schemaVersion: string | undefined;
  private queue: Pending[] = [];
  private running = false;
  /** Counts for tests and benchmarks. */
  readonly stats = {
    declarations: 0,
    skippedUnchanged: 0,
    rejectedBeforeSending: 0,
    /** Applications posted by per-application declarations. */
    applicationsPosted: 0,
  };
  /** Whether declarations go per application (AS3 3.47 and later, unless told otherwise). */
  private perApp = false;

  constructor(private readonly opts: F5AdapterOptions) {
    this.owner = opts.owner;
    this.tenant = opts.tenant ?? defaultTenant(opts.owner);
    this.client = new BigIpClient(opts);
  }

  capabilities(): Capabilities {
    return F5_CAPABILITIES;
  }

  async verify(): Promise<void> {
    try {
      await this.checkAs3();
    } catch (err) {
      if (!(err instanceof F5Error)) throw err;
      throw new AdapterCheckError(`F5 ${this.opts.url}: ${err.message}`, err.code !== 'Unavailable');
    }
  }

  /** The BIG-IP's AS3 service answers (one small read). */
  async probe(): Promise<void> {
    const r = await this.client.call('GET', '/mgmt/shared/appsvcs/info');
    if (r.status !== 200)
      throw new F5Error('Unavailable', `GET /mgmt/shared/appsvcs/info answered ${r.status}`);
  }

  /** Checks once that AS3 is installed and new enough; the schema version we declare follows it. */
  private async checkAs3(): Promise<string> {
    if (this.schemaVersion) return this.schemaVersion;
    const r = await this.client.call('GET', '/mgmt/shared/appsvcs/info');
    if (r.status === 404) {
      throw new F5Error(
        'As3Missing',
        `AS3 is not installed on ${this.opts.url} (GET /mgmt/shared/appsvcs/info: 404)`,
      );
    }
    const info = infoSchema.safeParse(r.body);
    if (r.status !== 200 || !info.success) {
      throw new F5Error('BadResponse', `GET /mgmt/shared/appsvcs/info answered ${r.status}`);
    }
    const v = info.data.version;
    if (versionNumber(v) < versionNumber(MIN_AS3_VERSION)) {
      throw new F5Error(
        'As3TooOld',
        `AS3 ${v} on ${this.opts.url} is too old; npl-lb needs ${MIN_AS3_VERSION} or later`,
      );
    }
    const mode = this.opts.declarations ?? 'auto';
    const perAppAvailable = versionNumber(v) >= versionNumber(PER_APP_AS3_VERSION);
    if (mode === 'application' && !perAppAvailable) {
      throw new F5Error(
        'As3TooOld',
        `AS3 ${v} on ${this.opts.url} has no per-application declarations (${PER_APP_AS3_VERSION} or later); set declarations: tenant or auto`,
      );
    }
    this.perApp = mode === 'application' || (mode === 'auto' && perAppAvailable);
    this.schemaVersion =
      versionNumber(v) > versionNumber(AS3_SCHEMA_VERSION) ? AS3_SCHEMA_VERSION : v.split('-')[0]!;
    return this.schemaVersion;
  }

  /**
   * Each member of our pools as BIG-IP's monitors see it, from the read-only iControl REST pool
   * members (`state`: up, down, unchecked, checking, user-down; `session`: user-disabled drains).
   */
  async health(): Promise<MemberHealth[]> {
    return membersHealth(this.client, await this.declaration(), {
      tenant: this.tenant,
      owner: this.owner,
      perApp: this.perApp,
    });
  }

  /** The ADC declaration as AS3 has it ({} when there is none). */
  private async declaration(): Promise<Json> {
    const r = await this.client.call('GET', '/mgmt/shared/appsvcs/declare');
    if (r.status !== 200 && r.status !== 204) {
      throw new F5Error('Unavailable', `GET /mgmt/shared/appsvcs/declare answered ${r.status}`);
    }
    return r.status === 204 ? {} : (r.body as Json);
  }

  async observe(): Promise<Observed> {
    warmAs3Validator(); // before the reads, never between a read and the declaration's POST
    await this.checkAs3();
    const adc = await this.declaration();
    const observed = parseDeclaration(adc, this.tenant, this.owner);
    this.tenants = tenantsOf(adc, this.tenant);
    return observed;
  }

  apply(changes: Change[]): Promise<ApplyResult[]> {
    if (changes.length === 0) return Promise.resolve([]);
    return new Promise((resolve, reject) => {
      this.queue.push({ changes, resolve, reject });
      void this.drain();
    });
  }

  /** One declaration at a time; whatever queued meanwhile goes out as the next one. */
  private async drain(): Promise<void> {
    if (this.running) return;
    this.running = true;
    try {
      while (this.queue.length > 0) {
        const batch = this.queue.splice(0);
        try {
          const results = await this.applyBatch(batch.flatMap((b) => b.changes));
          let i = 0;
          for (const b of batch) {
            b.resolve(results.slice(i, i + b.changes.length));
            i += b.changes.length;
          }
        } catch (err) {
          for (const b of batch) b.reject(err);
        }
      }
    } finally {
      this.running = false;
    }
  }

  /** Our objects as our tenants have them, by name. */
  private ownedNow(): OwnedObjects {
    const o = parseDeclaration(Object.fromEntries(this.tenants ?? []), this.tenant, this.owner);
    return {
      pools: new Map(o.owned.pools.map((p) => [p.name, p])),
      vss: new Map(o.owned.virtualServices.map((v) => [v.name, v])),
      certs: new Map((o.owned.certificates ?? []).map((c) => [c.name, c])),
    };
  }

  private async applyBatch(changes: Change[]): Promise<ApplyResult[]> {
    const schemaVersion = await this.checkAs3();
    if (!this.tenants) await this.observe();
    const outcome = new Map<number, Outcome>();
    const fail = (i: number, code: AdapterErrorCode, message: string, terminal: boolean) =>
      outcome.set(i, { ok: false, error: { code, message, terminal } });
    // Foreign objects never get here: the controller's ownership guard refuses them.
    for (const b of batchPrecheck(changes, this.ownedNow())) fail(b.index, b.code, b.message, b.terminal);
    const objectOf = changeOfObject(changes);

    // Render, validate, leave out what fails and what depends on it, until the rest is valid.
    for (let round = 0; round <= changes.length; round++) {
      const owned = withChanges(this.ownedNow(), changes, outcome);
      const blocked = renderProblems(changes, outcome, owned);
      if (blocked.length > 0) {
        for (const b of blocked) fail(b.index, b.code, b.message, b.terminal);
        continue;
      }
      const current = this.tenants ?? new Map<string, Json>();
      const next = renderTenants(current, owned, { tenant: this.tenant, owner: this.owner }, this.perApp);
      const changed = [...next].filter(([t, json]) => !isDeepStrictEqual(json, current.get(t)));
      // An iRule past BIG-IP's size: its virtual service refused by name, not the declaration whole.
      const large = iRuleSizeProblems(changed, changes, outcome, owned);
      if (large.length > 0) {
        for (const b of large) fail(b.index, 'Invalid', b.message, true);
        continue;
      }
      const body = {
        class: 'ADC',
        schemaVersion,
        id: `npl-lb-${this.owner}`,
        ...Object.fromEntries(changed),
      };
      const problems = changed.length > 0 ? validateAs3(body) : [];
      const tenants = new Set(next.keys());
      if (problems.length > 0) {
        this.stats.rejectedBeforeSending++;
        const blamed = blame(
          tenants,
          problems.map((p) => `${p.path}: ${p.message}`),
          objectOf,
          outcome,
        );
        if (blamed.length === 0) {
          changes.forEach(
            (_, i) =>
              outcome.has(i) ||
              fail(i, 'Invalid', problems.map((p) => `${p.path}: ${p.message}`).join('; '), true),
          );
          break;
        }
        for (const b of blamed) fail(b.index, 'Invalid', `AS3 schema: ${b.message}`, true);
        continue;
      }
      if (changed.length === 0) {
        this.stats.skippedUnchanged++;
        break;
      }
      const sent = this.perApp ? await this.declareApps(body, changed) : await this.declare(body);
      if (sent.ok) {
        this.tenants = settled(current, changed);
        break;
      }
      if (sent.invalid) {
        const blamed = blame(tenants, sent.invalid, objectOf, outcome);
        if (blamed.length > 0) {
          for (const b of blamed) fail(b.index, 'Invalid', `AS3 rejected: ${b.message}`, true);
          continue;
        }
      }
      changes.forEach((_, i) => outcome.has(i) || fail(i, sent.code, sent.message, sent.terminal));
      break;
    }
    return changes.map((change, i) => {
      const o = outcome.get(i);
      return o && !o.ok ? { change, ok: false, error: o.error } : { change, ok: true };
    });
  }

  /** Posts one declaration; an answer that leaves the device's state unknown forgets our tenants. */
  private async declare(body: Json | undefined, request: DeclareRequest = DECLARE): Promise<DeclareOutcome> {
    this.stats.declarations++;
    const tenants = body
      ? Object.keys(body).filter((k) => (body[k] as Json | null)?.class === 'Tenant')
      : [request.path.split('/')[4] ?? this.tenant];
    // A whole declaration goes to `/declare/<its tenants>`: AS3 then deploys those tenants alone,
    // whatever else a declaration might carry (never CIS's partition or another cluster's).
    const scoped =
      request === DECLARE && body && tenants.length > 0
        ? { method: request.method, path: `${DECLARE.path}/${tenants.map(encodeURIComponent).join(',')}` }
        : request;
    const out = await postDeclaration(
      this.client,
      body,
      tenants.length > 0 ? tenants : [this.tenant],
      { pollMs: this.opts.taskPollMs ?? 1000, timeoutMs: this.opts.taskTimeoutMs ?? 600_000 },
      scoped,
    );
    if (!out.ok && !out.terminal) this.tenants = undefined;
    return out;
  }

  /**
   * Per-application declarations, tenant by tenant: the applications that changed in one POST,
   * those that went one DELETE each (virtual services first); the whole tenant when its layout
   * changes (the first pass after whole-tenant declarations) or it is new. After a partial failure
   * our tenants are read again.
   */
  private async declareApps(body: Json, changed: [string, Json][]): Promise<DeclareOutcome> {
    let first = true;
    for (const [tenant, next] of changed) {
      const now = this.tenants?.get(tenant);
      const diff = appChanges(now, next);
      const steps: [Json | undefined, DeclareRequest][] = [];
      if (diff.whole || !now) {
        steps.push([
          { class: 'ADC', schemaVersion: body.schemaVersion, id: body.id, [tenant]: next },
          DECLARE,
        ]);
      } else {
        const apps = `/mgmt/shared/appsvcs/declare/${encodeURIComponent(tenant)}/applications`;
        if (Object.keys(diff.post).length > 0) {
          this.stats.applicationsPosted += Object.keys(diff.post).length;
          steps.push([
            { schemaVersion: body.schemaVersion, ...diff.post },
            { method: 'POST', path: apps },
          ]);
        }
        for (const name of diff.remove)
          steps.push([undefined, { method: 'DELETE', path: `${apps}/${encodeURIComponent(name)}` }]);
      }
      for (const [b, request] of steps) {
        const out = await this.declare(b, request);
        if (!out.ok) {
          if (!first) this.tenants = undefined;
          return out;
        }
        first = false;
      }
    }
    return { ok: true };
  }

  async close(): Promise<void> {
    await this.client.close();
  }
}
