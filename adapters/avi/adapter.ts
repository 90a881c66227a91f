/**
 * The Avi adapter. observe() lists our objects (paged, `created_by` filter) and the names of
 * everyone else's; apply() writes children before parents (pools, then per virtual service its
 * poolgroups and vsvip, then httppolicyset and virtualservice, each as soon as what it needs is)
 * and deletes parents before children, with bounded concurrency. An object is written only when its
 * checksum changed. 404 on delete is success; 409 on create re-reads by name; 412 re-reads and
 * retries; other 400s are terminal; 5xx and timeouts are retried by the work queue.
 */
import PQueue from 'p-queue';
import { applyCoreKinds } from '../../src/adapter/core-kinds.ts';
import type {
  ApplyError,
  ApplyResult,
  Capabilities,
  LoadBalancerAdapter,
  MemberHealth,
} from '../../src/adapter/contract.ts';
import { AdapterCheckError } from '../../src/adapter/contract.ts';
import { AdapterError, type AdapterErrorCode } from '../../src/adapter/errors.ts';
import type { Change as AnyChange, CoreChange as Change, Observed } from '../../src/adapter/changes.ts';
import type { VirtualService } from '../../src/model/types.ts';
import {
  type AviObject,
  type AviPlacement,
  type AviType,
  createdBy,
  invalid,
  type Lookup,
  ownedBy,
  ownerOf,
  parsePool,
  parseVirtualService,
  poolGroupName,
  renderPool,
  renderVirtualService,
} from './objects.ts';
import { readRuntimeServers } from './runtime-server.ts';
import { AviError, AviSession, type AviSessionOptions } from './session.ts';

export interface AviAdapterOptions extends AviSessionOptions, Partial<Omit<AviPlacement, 'version'>> {
  owner: string;
  /** Calls in flight at once (default 8). */
  concurrency?: number;
}

type Raw = Record<string, unknown>;

class Failure extends AdapterError {
  readonly error: ApplyError;
  constructor(code: AdapterErrorCode, message: string, terminal: boolean) {
    super(code, message, { terminal });
    this.error = { code, message, terminal };
  }
}
const fail = (code: AdapterErrorCode, message: string, terminal: boolean): never => {
  throw new Failure(code, message, terminal);
};

const TYPES: AviType[] = ['pool', 'poolgroup', 'vsvip', 'httppolicyset', 'virtualservice'];

export class AviAdapter implements LoadBalancerAdapter {
  readonly name = 'avi';
  readonly owner: string;
  readonly session: AviSession;
  private readonly at: AviPlacement;
  /** The device's objects by type and name, as last read or written (undefined: read first). */
  private cache: Map<AviType, Map<string, Raw>> | undefined;
  readonly stats = { writes: 0, skippedUnchanged: 0 };

  /** Every write to the controller, shared by concurrent applies. */
  private readonly calls: PQueue;

  constructor(private readonly opts: AviAdapterOptions) {
    this.owner = opts.owner;
    this.session = new AviSession(opts);
    this.calls = new PQueue({ concurrency: opts.concurrency ?? 8 });
    this.at = {
      cloud: opts.cloud ?? 'Default-Cloud',
      seGroup: opts.seGroup ?? 'Default-Group',
      vrf: opts.vrf ?? 'global',
      version: opts.version,
      ...(opts.gracefulDisableSeconds !== undefined
        ? { gracefulDisableSeconds: opts.gracefulDisableSeconds }
        : {}),
    };
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
      await this.session.login();
      const r = await this.session.call('GET', `/api/cloud?name=${encodeURIComponent(this.at.cloud)}`);
      if (r.status !== 200 || ((r.body as { count?: number }).count ?? 0) === 0) {
        throw new AdapterCheckError(
          `Avi ${this.opts.url}: cloud ${this.at.cloud} not found (tenant ${this.opts.tenant})`,
          true,
        );
      }
    } catch (err) {
      if (err instanceof AdapterCheckError) throw err;
      if (err instanceof AviError) {
        throw new AdapterCheckError(
          `Avi ${this.opts.url}: ${err.message}`,
          err.status === 401 || err.status === 403,
        );
      }
      throw err;
    }
  }

  /** Every object of a type, following `next` pages. */
  private async list(type: string, query = ''): Promise<Raw[]> {
    const out: Raw[] = [];
    let path: string | undefined = `/api/${type}?page_size=200${query}`;
    for (let pages = 0; path && pages < 10_000; pages++) {
      const r = await this.session.call('GET', path);
      if (r.status !== 200)
        throw new AviError(r.status, `GET /api/${type}: ${r.status} ${errorText(r.body)}`);
      const page = r.body as { results?: Raw[]; next?: string };
      out.push(...(page.results ?? []));
      path = page.next ? new URL(page.next).pathname + new URL(page.next).search : undefined;
    }
    return out;
  }

  async observe(): Promise<Observed> {
    const mine = `&created_by=${encodeURIComponent(createdBy(this.owner))}`;
    const [pools, vss, vsvips, pgs, sets, hms, nps] = await Promise.all([
      this.list('pool'),
      this.list('virtualservice'),
      this.list('vsvip'),
      this.list('poolgroup', mine),
      this.list('httppolicyset', mine),
      this.list('healthmonitor'),
      this.list('networkprofile'),
    ]);
    const cache = new Map<AviType, Map<string, Raw>>(TYPES.map((t) => [t, new Map()]));
    const lookup: Lookup = { byUuid: new Map(), names: new Map() };
    const add = (type: AviType, list: Raw[]) => {
      for (const o of list) {
        cache.get(type)!.set(String(o.name), o);
        lookup.byUuid.set(String(o.uuid), o);
      }
    };
    add('pool', pools);
    add('virtualservice', vss);
    add('vsvip', vsvips);
    add('poolgroup', pgs);
    add('httppolicyset', sets);
    for (const o of [...hms, ...nps]) lookup.names.set(String(o.uuid), String(o.name));
    this.cache = cache;
    const observed: Observed = { owned: { pools: [], virtualServices: [] }, foreign: [] };
    for (const p of pools) {
      if (ownedBy('pool', p, this.owner)) observed.owned.pools.push(parsePool(p, lookup));
      else
        observed.foreign.push({
          kind: 'pool',
          name: String(p.name),
          owner: ownerOf(p.created_by) ?? 'unknown',
        });
    }
    for (const v of vss) {
      if (ownedBy('virtualservice', v, this.owner))
        observed.owned.virtualServices.push(parseVirtualService(v, lookup));
      else
        observed.foreign.push({
          kind: 'virtualService',
          name: String(v.name),
          owner: ownerOf(v.created_by) ?? 'unknown',
        });
    }
    return observed;
  }

  /** Each server of our pools as Avi's health monitors see it (GET /api/pool/{uuid}/runtime/server). */
  async health(): Promise<MemberHealth[]> {
    const pools = (
      await this.list('pool', `&created_by=${encodeURIComponent(createdBy(this.owner))}`)
    ).filter((p) => ownedBy('pool', p, this.owner));
    const q = new PQueue({ concurrency: 8 });
    const lists = await Promise.all(
      pools.map((p) =>
        q.add(async () => {
          const r = await this.session.call('GET', `/api/pool/${String(p.uuid)}/runtime/server`);
          if (r.status !== 200) {
            throw new AviError(
              r.status,
              `GET /api/pool/${String(p.uuid)}/runtime/server: ${errorText(r.body)}`,
            );
          }
          const read = readRuntimeServers(String(p.name), r.body);
          if ('error' in read) throw new AviError(r.status, read.error);
          return read;
        }),
      ),
    );
    return lists.flat();
  }

  /**
   * Applies the changes as a pipeline, not in phases: each pool is written at once; a virtual
   * service as soon as the pools it uses are (its VsVip and pool groups in parallel, then its
   * policy set, then itself); virtual service deletes after every upsert, pool deletes after those.
   * Every call to the controller goes through one limiter (`concurrency`, default 8), shared by
   * concurrent applies.
   */
  apply(changes: AnyChange[]): Promise<ApplyResult[]> {
    return applyCoreKinds(changes, (core) => this.applyCore(core));
  }

  private async applyCore(changes: Change[]): Promise<ApplyResult[]> {
    if (changes.length === 0) return [];
    if (!this.cache) await this.observe();
    const results: ApplyResult[] = new Array(changes.length);
    const run = async (i: number, deps: Promise<unknown>[], fn: (c: Change) => Promise<void>) => {
      await Promise.all(deps);
      const c = changes[i]!;
      try {
        await fn(c);
        results[i] = { change: c, ok: true };
      } catch (err) {
        if (err instanceof Failure) results[i] = { change: c, ok: false, error: err.error };
        else {
          const message = err instanceof Error ? err.message : String(err);
          results[i] = { change: c, ok: false, error: { code: 'Unavailable', message, terminal: false } };
        }
      }
    };
    const pools = new Map<string, Promise<void>>();
    changes.forEach((c, i) => {
      if (c.kind === 'pool' && c.op !== 'delete')
        pools.set(
          c.name,
          run(i, [], (x) => this.upsertPool(x)),
        );
    });
    const upserts: Promise<void>[] = [];
    changes.forEach((c, i) => {
      if (c.kind !== 'virtualService' || c.op === 'delete') return;
      const deps = usedPools(c.desired).flatMap((p) => pools.get(p) ?? []);
      upserts.push(run(i, deps, (x) => this.upsertVirtualService(x)));
    });
    const vsDeletes: Promise<void>[] = [];
    changes.forEach((c, i) => {
      if (c.kind === 'virtualService' && c.op === 'delete')
        vsDeletes.push(run(i, upserts, (x) => this.deleteVirtualService(x)));
    });
    const poolDeletes: Promise<void>[] = [];
    changes.forEach((c, i) => {
      if (c.kind === 'pool' && c.op === 'delete')
        poolDeletes.push(run(i, [...upserts, ...vsDeletes], (x) => this.remove('pool', x.name)));
    });
    await Promise.all([...pools.values(), ...upserts, ...vsDeletes, ...poolDeletes]);
    return results;
  }

  private current(type: AviType, name: string): Raw | undefined {
    return this.cache!.get(type)!.get(name);
  }

  /** The checks every change goes through first: ownership, and that an update has something to update. */
  private precheck(c: Change): void {
    const type: AviType = c.kind === 'pool' ? 'pool' : 'virtualservice';
    const cur = this.current(type, c.name);
    if (cur && !ownedBy(type, cur, this.owner)) {
      fail(
        'NotOwned',
        `${type} ${c.name} belongs to ${String(cur.created_by ?? 'someone else')}; left alone`,
        true,
      );
    }
    if (c.op === 'update' && !cur)
      fail('NotFound', `${type} ${c.name} is not on the controller; it is created on the next pass`, false);
  }

  private async upsertPool(c: Change): Promise<void> {
    if (c.kind !== 'pool' || c.op === 'delete') return;
    this.precheck(c);
    const o = renderPool(c.desired, this.owner, this.at);
    const problems = invalid('pool', o);
    if (problems.length > 0) fail('Invalid', problems.join('; '), true);
    await this.upsert('pool', o);
  }

  private async upsertVirtualService(c: Change): Promise<void> {
    if (c.kind !== 'virtualService' || c.op === 'delete') return;
    this.precheck(c);
    const vs = c.desired;
    const parts = renderVirtualService(vs, this.owner, this.at);
    const problems = parts.flatMap((p) => invalid(p.type, p.object));
    if (problems.length > 0) fail('Invalid', problems.join('; '), true);
    const missing = usedPools(vs).find((p) => !this.current('pool', p));
    if (missing) fail('DependencyFailed', `pool ${missing} is not on the controller yet`, false);
    const first = parts.filter((p) => p.type === 'vsvip' || p.type === 'poolgroup');
    await Promise.all(first.map((p) => this.upsert(p.type, p.object)));
    for (const p of parts) if (!first.includes(p)) await this.upsert(p.type, p.object);
    if (vs.kind === 'l7') {
      const keep = new Set(parts.filter((p) => p.type === 'poolgroup').map((p) => p.object.name));
      for (const name of this.groupsOf(vs.name)) if (!keep.has(name)) await this.remove('poolgroup', name);
    }
  }

  private async deleteVirtualService(c: Change): Promise<void> {
    if (c.kind !== 'virtualService' || c.op !== 'delete') return;
    this.precheck(c);
    await this.remove('virtualservice', c.name);
    if (c.observed.kind === 'l7') {
      await this.remove('httppolicyset', c.name);
      for (const name of this.groupsOf(c.name)) await this.remove('poolgroup', name);
    }
    await this.remove('vsvip', c.name);
  }

  /** Our poolgroups of one L7 virtual service. */
  private groupsOf(vs: string): string[] {
    const prefix = poolGroupName(vs, '');
    return [...this.cache!.get('poolgroup')!.keys()].filter((n) => n.startsWith(prefix));
  }

  /** Creates or updates one object; a write only when its checksum changed. */
  private async upsert(type: AviType, o: AviObject, retried = false): Promise<void> {
    const sumKey = type === 'vsvip' ? 'vsvip_cloud_config_cksum' : 'cloud_config_cksum';
    const cur = this.current(type, o.name);
    if (cur && !ownedBy(type, cur, this.owner))
      fail('NotOwned', `${type} ${o.name} is not ours; left alone`, true);
    if (cur && cur[sumKey] === o[sumKey]) {
      this.stats.skippedUnchanged++;
      return;
    }
    this.stats.writes++;
    const r = await this.calls.add(() =>
      cur
        ? this.session.call('PUT', `/api/${type}/${String(cur.uuid)}`, {
            ...o,
            _last_modified: cur._last_modified,
          })
        : this.session.call('POST', `/api/${type}`, o),
    );
    if (r.status === 200 || r.status === 201) {
      this.cache!.get(type)!.set(o.name, r.body as Raw);
      return;
    }
    if (!retried && (r.status === 409 || r.status === 412 || (r.status === 404 && cur))) {
      // Someone else wrote first (409: it exists; 412: it changed; 404: it went): read it again, retry once.
      await this.reread(type, o.name);
      return this.upsert(type, o, true);
    }
    this.failed(`${cur ? 'PUT' : 'POST'} ${type} ${o.name}`, r.status, r.body);
  }

  private async reread(type: AviType, name: string): Promise<void> {
    const r = await this.session.call('GET', `/api/${type}?name=${encodeURIComponent(name)}`);
    if (r.status !== 200) this.failed(`GET ${type} ${name}`, r.status, r.body);
    const found = (r.body as { results?: Raw[] }).results?.[0];
    if (found) this.cache!.get(type)!.set(name, found);
    else this.cache!.get(type)!.delete(name);
  }

  private async remove(type: AviType, name: string): Promise<void> {
    const cur = this.current(type, name);
    if (!cur) return;
    if (!ownedBy(type, cur, this.owner)) fail('NotOwned', `${type} ${name} is not ours; left alone`, true);
    this.stats.writes++;
    const r = await this.calls.add(() => this.session.call('DELETE', `/api/${type}/${String(cur.uuid)}`));
    if (r.status === 200 || r.status === 204 || r.status === 404) {
      this.cache!.get(type)!.delete(name);
      return;
    }
    // Still referred to by another object: controllers answer 400 or 403 (409 in some versions),
    // naming the referrers. It goes once they do (a later pass).
    if ([400, 403, 409].includes(r.status) && /referred by|in use/i.test(errorText(r.body)))
      fail('InUse', `DELETE ${type} ${name}: ${errorText(r.body)}`, false);
    this.failed(`DELETE ${type} ${name}`, r.status, r.body);
  }

  private failed(what: string, status: number, body: unknown): never {
    const message = `${what}: ${status} ${errorText(body)}`;
    if (status === 400) return fail('Invalid', message, true);
    if (status === 409) return fail('Conflict', message, false);
    return fail(status === 401 || status === 403 ? 'Unauthorized' : 'Unavailable', message, false);
  }

  async close(): Promise<void> {
    await this.session.close();
  }
}

function usedPools(vs: VirtualService): string[] {
  return vs.kind === 'l4'
    ? [vs.pool]
    : [...vs.routes.map((r) => r.pool), ...(vs.defaultPool ? [vs.defaultPool] : [])];
}

function errorText(body: unknown): string {
  if (typeof body === 'string') return body;
  const e = (body as { error?: unknown } | undefined)?.error;
  return typeof e === 'string' ? e : JSON.stringify(body ?? '');
}
