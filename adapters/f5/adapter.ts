/**
 * The F5 BIG-IP adapter, on AS3. The whole tenant is rendered from the model and posted as one
 * declaration; changes that arrive while a declaration is in flight wait and go out together in
 * the next one (one declaration in flight per BIG-IP, the newest state wins). Every declaration is
 * validated against the AS3 schema before it is sent: an object that fails is left out and
 * reported (terminal), with anything that depends on it; the rest goes. A tenant that did not
 * change is not posted.
 */
import { isDeepStrictEqual } from 'node:util';
import PQueue from 'p-queue';
import { applyCoreKinds } from '../../src/adapter/core-kinds.ts';
import type { AdapterErrorCode } from '../../src/adapter/errors.ts';
import { z } from 'zod';
import {
  AdapterCheckError,
  type ApplyError,
  type ApplyResult,
  type Capabilities,
  type LoadBalancerAdapter,
  type MemberHealth,
} from '../../src/adapter/contract.ts';
import type { Pool, VirtualService } from '../../src/model/types.ts';
import type { Change as AnyChange, CoreChange as Change, Observed } from '../../src/adapter/changes.ts';
import { validateAs3, AS3_SCHEMA_VERSION } from './as3-validate.ts';
import { postDeclaration, type DeclareOutcome } from './as3-declare.ts';
import { readPoolMembers } from './icontrol-view.ts';
import { BigIpClient, type BigIpClientOptions, F5Error } from './client.ts';
import {
  APP,
  type Json,
  ownedObjectNames,
  parseDeclaration,
  renderPool,
  renderVirtualService,
} from './declaration.ts';

/** The oldest AS3 we declare for (our declarations use nothing newer). */
export const MIN_AS3_VERSION = '3.36.0';

export interface F5AdapterOptions extends BigIpClientOptions {
  owner: string;
  /** The partition our objects live in (default npl_lb_<owner>). */
  tenant?: string;
  /** How often to poll an asynchronous declaration's task, and for how long at most. */
  taskPollMs?: number;
  taskTimeoutMs?: number;
}

const infoSchema = z.object({ version: z.string().regex(/^\d+\.\d+\.\d+/) }).loose();
const versionNumber = (v: string): number => {
  const [a = 0, b = 0, c = 0] = v.split('.').map((x) => Number.parseInt(x, 10));
  return a * 1_000_000 + b * 1000 + c;
};

export const defaultTenant = (owner: string): string => `npl_lb_${owner.replace(/[^0-9A-Za-z_]/g, '_')}`;

interface Pending {
  changes: Change[];
  resolve: (r: ApplyResult[]) => void;
  reject: (e: unknown) => void;
}

type Outcome = { ok: true } | { ok: false; error: ApplyError };

export class F5Adapter implements LoadBalancerAdapter {
  readonly name = 'f5';
  readonly owner: string;
  readonly tenant: string;
  readonly client: BigIpClient;
  /** Our tenant as the device has it (undefined: not known, read it first). */
  private tenantJson: Json | undefined;
  private schemaVersion: string | undefined;
  private queue: Pending[] = [];
  private running = false;
  /** Counts for tests and benchmarks. */
  readonly stats = { declarations: 0, skippedUnchanged: 0, rejectedBeforeSending: 0 };

  constructor(private readonly opts: F5AdapterOptions) {
    this.owner = opts.owner;
    this.tenant = opts.tenant ?? defaultTenant(opts.owner);
    this.client = new BigIpClient(opts);
  }

  capabilities(): Capabilities {
    return {
      l4: { tcp: true, udp: true },
      l7: true,
      memberNodeTag: true,
      drainingMembers: true,
      applyConcurrency: 4,
    };
  }

  async verify(): Promise<void> {
    try {
      await this.checkAs3();
    } catch (err) {
      if (!(err instanceof F5Error)) throw err;
      throw new AdapterCheckError(`F5 ${this.opts.url}: ${err.message}`, err.code !== 'Unavailable');
    }
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
    this.schemaVersion =
      versionNumber(v) > versionNumber(AS3_SCHEMA_VERSION) ? AS3_SCHEMA_VERSION : v.split('-')[0]!;
    return this.schemaVersion;
  }

  /**
   * Each member of our pools as BIG-IP's monitors see it, from the read-only iControl REST pool
   * members (`state`: up, down, unchecked, checking, user-down; `session`: user-disabled drains).
   */
  async health(): Promise<MemberHealth[]> {
    const pools = parseDeclaration(await this.declaration(), this.tenant, this.owner).owned.pools.map(
      (p) => p.name,
    );
    const q = new PQueue({ concurrency: 8 });
    const lists = await Promise.all(
      pools.map((pool) =>
        q.add(async () => {
          const path = `/mgmt/tm/ltm/pool/~${this.tenant}~${APP}~${pool}/members`;
          const m = await this.client.call('GET', path);
          if (m.status === 404) return [];
          const read = m.status === 200 ? readPoolMembers(pool, m.body) : undefined;
          if (!read) throw new F5Error('Unavailable', `GET ${path} answered ${m.status}`);
          return read;
        }),
      ),
    );
    return lists.flat();
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
    await this.checkAs3();
    const adc = await this.declaration();
    const observed = parseDeclaration(adc, this.tenant, this.owner);
    this.tenantJson = (adc[this.tenant] as Json | undefined) ?? { class: 'Tenant' };
    return observed;
  }

  apply(changes: AnyChange[]): Promise<ApplyResult[]> {
    return applyCoreKinds(changes, (core) =>
      core.length === 0
        ? Promise.resolve([])
        : new Promise((resolve, reject) => {
            this.queue.push({ changes: core, resolve, reject });
            void this.drain();
          }),
    );
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

  /** Our objects as the tenant has them, by name. */
  private ownedNow(): { pools: Map<string, Pool>; vss: Map<string, VirtualService> } {
    const o = parseDeclaration({ [this.tenant]: this.tenantJson }, this.tenant, this.owner);
    return {
      pools: new Map(o.owned.pools.map((p) => [p.name, p])),
      vss: new Map(o.owned.virtualServices.map((v) => [v.name, v])),
    };
  }

  private async applyBatch(changes: Change[]): Promise<ApplyResult[]> {
    const schemaVersion = await this.checkAs3();
    if (!this.tenantJson) await this.observe();
    const outcome = new Map<number, Outcome>();
    const fail = (i: number, code: AdapterErrorCode, message: string, terminal: boolean) =>
      outcome.set(i, { ok: false, error: { code, message, terminal } });
    // Foreign objects never get here: the controller's ownership guard refuses them.
    const start = this.ownedNow();
    changes.forEach((c, i) => {
      if (c.op === 'update' && !(c.kind === 'pool' ? start.pools : start.vss).has(c.name)) {
        fail(
          i,
          'NotFound',
          `${c.kind} ${c.name} is not on the device; it will be created on the next pass`,
          false,
        );
      }
    });
    const objectOf = new Map<string, number>();
    changes.forEach((c, i) => {
      if (c.kind === 'pool') objectOf.set(c.name, i);
      else for (const n of ownedObjectNames(c.op === 'delete' ? c.observed : c.desired)) objectOf.set(n, i);
    });

    // Render, validate, leave out what fails and what depends on it, until the rest is valid.
    for (let round = 0; round <= changes.length; round++) {
      const { pools, vss } = this.ownedNow();
      changes.forEach((c, i) => {
        if (outcome.has(i)) return;
        const map = (c.kind === 'pool' ? pools : vss) as Map<string, Pool | VirtualService>;
        if (c.op === 'delete') map.delete(c.name);
        else map.set(c.name, c.desired);
      });
      const broken = this.dependencyProblems(changes, outcome, pools, vss);
      if (broken.length > 0) {
        for (const b of broken) fail(b.index, b.code, b.message, b.terminal);
        continue;
      }
      const tenant = this.renderTenant(pools, vss);
      const body = { class: 'ADC', schemaVersion, id: `npl-lb-${this.owner}`, [this.tenant]: tenant };
      const problems = validateAs3(body);
      if (problems.length > 0) {
        this.stats.rejectedBeforeSending++;
        const blamed = this.blame(
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
      if (isDeepStrictEqual(tenant, this.tenantJson)) {
        this.stats.skippedUnchanged++;
        break;
      }
      const sent = await this.declare(body);
      if (sent.ok) {
        this.tenantJson = tenant;
        break;
      }
      if (sent.invalid) {
        const blamed = this.blame(sent.invalid, objectOf, outcome);
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

  /** Virtual services whose pools would be missing: the change that causes it fails instead. */
  private dependencyProblems(
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
  private blame(
    lines: string[],
    objectOf: Map<string, number>,
    outcome: Map<number, Outcome>,
  ): { index: number; message: string }[] {
    const out = new Map<number, string>();
    for (const line of lines) {
      const m = /^\/?(?:declaration\/)?([^/:\s]+)\/([^/:\s]+)\/([^/:\s]+)/.exec(line);
      if (!m || m[1] !== this.tenant || m[2] !== APP) continue;
      const i = objectOf.get(m[3]!);
      if (i !== undefined && !outcome.has(i) && !out.has(i)) out.set(i, line);
    }
    return [...out].map(([index, message]) => ({ index, message }));
  }

  /** Our tenant: foreign objects and applications as they are, our application from the model. */
  private renderTenant(pools: Map<string, Pool>, vss: Map<string, VirtualService>): Json {
    const current = this.tenantJson ?? { class: 'Tenant' };
    const oldApp = (current[APP] as Json | undefined) ?? {};
    const app: Json = { class: 'Application', template: 'generic' };
    const ours = new Set<string>();
    const before = parseDeclaration({ [this.tenant]: current }, this.tenant, this.owner);
    for (const v of before.owned.virtualServices) for (const n of ownedObjectNames(v)) ours.add(n);
    for (const p of before.owned.pools) ours.add(p.name);
    for (const [name, o] of Object.entries(oldApp)) {
      if (name !== 'class' && name !== 'template' && !ours.has(name)) app[name] = o;
    }
    for (const name of [...pools.keys()].sort()) app[name] = renderPool(pools.get(name)!, this.owner);
    for (const name of [...vss.keys()].sort())
      Object.assign(app, renderVirtualService(vss.get(name)!, this.owner));
    const tenant: Json = { ...current, class: 'Tenant' };
    if (Object.keys(app).length > 2) tenant[APP] = app;
    else delete tenant[APP];
    return tenant;
  }

  /** Posts one declaration; an answer that leaves the device's state unknown forgets our tenant. */
  private async declare(body: Json): Promise<DeclareOutcome> {
    this.stats.declarations++;
    const out = await postDeclaration(this.client, body, this.tenant, {
      pollMs: this.opts.taskPollMs ?? 1000,
      timeoutMs: this.opts.taskTimeoutMs ?? 600_000,
    });
    if (!out.ok && !out.terminal) this.tenantJson = undefined;
    return out;
  }

  async close(): Promise<void> {
    await this.client.close();
  }
}
