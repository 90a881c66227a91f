/**
 * The Avi adapter. observe() lists our objects (paged, `created_by` filter) and the names of
 * everyone else's; apply() writes children before parents (pools, then per virtual service its
 * poolgroups and vsvip, then httppolicyset and virtualservice, each as soon as what it needs is)
 * and deletes parents before children, with bounded concurrency. An object is written only when its
 * checksum changed. 404 on delete is success; 409 on create re-reads by name; 412 re-reads and
 * retries; other 400s are terminal; 5xx and timeouts are retried by the work queue.
 */
import PQueue from 'p-queue';
import type {
  ApplyError,
  ApplyResult,
  Capabilities,
  LoadBalancerAdapter,
  MemberHealth,
} from '../../src/adapter/contract.ts';
import { AdapterCheckError } from '../../src/adapter/contract.ts';
import { AdapterError, type AdapterErrorCode } from '../../src/adapter/errors.ts';
import type { Change, Observed } from '../../src/adapter/changes.ts';
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
  renderPool,
  storedSum,
} from './objects.ts';
import {
  allocatedVip,
  isSniChild,
  parseVirtualService,
  renderVirtualService,
  sniChildName,
} from './vs-objects.ts';
import { poolGroupName } from './http-policy.ts';
import { certificateProblem, parseCertificate, renderCertificate } from './certificates.ts';
import { ALL_HTTP } from '../../src/adapter/http-capabilities.ts';
import { certificateRefs, poolRefs } from '../../src/model/refs.ts';
import { readRuntimeServers } from './runtime-server.ts';
import { AviError, AviSession, type AviSessionOptions } from './session.ts';

export interface AviAdapterOptions extends AviSessionOptions, Partial<Omit<AviPlacement, 'version'>> {
  owner: string;
  /** Calls in flight at once (default 8). */
  concurrency?: number;
  /** The clock certificates' expiry is checked against (default Date.now). */
  now?: () => number;
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

const TYPES: AviType[] = [
  'pool',
  'poolgroup',
  'vsvip',
  'httppolicyset',
  'virtualservice',
  'sslkeyandcertificate',
  'vsdatascriptset',
];

export class AviAdapter implements LoadBalancerAdapter {
  readonly name = 'avi';
  readonly owner: string;
  readonly session: AviSession;
  private readonly at: AviPlacement;
  /** The device's objects by type and name, as last read or written (undefined: read first). */
  private cache: Map<AviType, Map<string, Raw>> | undefined;
  readonly stats = { writes: 0, skippedUnchanged: 0 };
  /** Our virtual services as last observed or written, in the model (for certificate rotations). */
  private readonly applied = new Map<string, VirtualService>();
  private readonly now: () => number;

  /** Every write to the controller, shared by concurrent applies. */
  private readonly calls: PQueue;

  constructor(private readonly opts: AviAdapterOptions) {
    this.owner = opts.owner;
    this.session = new AviSession(opts);
    this.calls = new PQueue({ concurrency: opts.concurrency ?? 8 });
    this.now = opts.now ?? Date.now;
    this.at = {
      cloud: opts.cloud ?? 'Default-Cloud',
      seGroup: opts.seGroup ?? 'Default-Group',
      vrf: opts.vrf ?? 'global',
      version: opts.version,
      ...(opts.gracefulDisableSeconds !== undefined
        ? { gracefulDisableSeconds: opts.gracefulDisableSeconds }
        : {}),
      ...(opts.vipNetwork ? { vipNetwork: opts.vipNetwork } : {}),
    };
  }

  capabilities(): Capabilities {
    return {
      l4: { tcp: true, udp: true },
      l7: true,
      memberNodeTag: true,
      drainingMembers: true,
      applyConcurrency: 4,
      // sslkeyandcertificate objects; HTTPS on an SNI parent with a child per further certificate.
      certificates: true,
      // An L4 virtual service whose DataScript picks a pool group by the ClientHello's name (passthrough.ts).
      tlsPassthrough: true,
      // HTTP policy sets (http-policy.ts): no regular expressions (string groups only), one query
      // parameter per rule, the redirect codes Avi has.
      http: {
        ...ALL_HTTP,
        pathTypes: ['Prefix', 'Exact', 'ImplementationSpecific'],
        regexMatches: false,
        redirectCodes: [301, 302, 307],
        maxQueryMatches: 1,
      },
      // With a VIP network, Avi's IPAM allocates every VIP not asked for (vsvip auto_allocate_ip).
      ...(this.at.vipNetwork ? { allocatesVips: true } : {}),
    };
  }

  /** The address Avi's IPAM gave each VIP group, from our VsVips as last read or written. */
  allocatedVips(): ReadonlyMap<string, string> {
    const out = new Map<string, string>();
    for (const o of this.cache?.get('vsvip')?.values() ?? []) {
      const found = ownedBy('vsvip', o, this.owner) ? allocatedVip(o) : undefined;
      if (found) out.set(found[0], found[1]);
    }
    return out;
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
    const [pools, vss, vsvips, pgs, sets, certs, scripts, hms, nps] = await Promise.all([
      this.list('pool'),
      this.list('virtualservice'),
      this.list('vsvip'),
      this.list('poolgroup', mine),
      this.list('httppolicyset', mine),
      this.list('sslkeyandcertificate'),
      this.list('vsdatascriptset', mine),
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
    add('sslkeyandcertificate', certs);
    add('vsdatascriptset', scripts);
    for (const o of [...hms, ...nps]) lookup.names.set(String(o.uuid), String(o.name));
    this.cache = cache;
    const observed: Observed = { owned: { pools: [], virtualServices: [], certificates: [] }, foreign: [] };
    const foreign = (kind: 'pool' | 'virtualService' | 'certificate', o: Raw) =>
      observed.foreign.push({ kind, name: String(o.name), owner: ownerOf(o.created_by) ?? 'unknown' });
    for (const p of pools) {
      if (ownedBy('pool', p, this.owner)) observed.owned.pools.push(parsePool(p, lookup));
      else foreign('pool', p);
    }
    const children = new Map<string, Raw[]>();
    for (const v of vss) {
      if (!isSniChild(v) || !ownedBy('virtualservice', v, this.owner)) continue;
      const parent = String(v.vh_parent_vs_ref ?? '');
      children.set(parent, [...(children.get(parent) ?? []), v]);
    }
    this.applied.clear();
    for (const v of vss) {
      if (!ownedBy('virtualservice', v, this.owner)) foreign('virtualService', v);
      else if (!isSniChild(v)) {
        const kids = [...children.entries()]
          .filter(([ref]) => ref.replace(/[?#].*$/, '').endsWith(`/${String(v.uuid)}`))
          .flatMap(([, list]) => list);
        const model = parseVirtualService(v, lookup, kids);
        this.applied.set(model.name, model);
        observed.owned.virtualServices.push(model);
      }
    }
    for (const c of certs) {
      const model = ownedBy('sslkeyandcertificate', c, this.owner) ? parseCertificate(c) : undefined;
      if (model) observed.owned.certificates!.push(model);
      else foreign('certificate', c);
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
  apply(changes: Change[]): Promise<ApplyResult[]> {
    return this.applyAll(changes);
  }

  private async applyAll(changes: Change[]): Promise<ApplyResult[]> {
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
    // Pools and certificates at once; a virtual service as soon as what it uses is written.
    const written = new Map<string, Promise<void>>();
    changes.forEach((c, i) => {
      if (c.op === 'delete') return;
      if (c.kind === 'pool')
        written.set(
          `pool/${c.name}`,
          run(i, [], (x) => this.upsertPool(x)),
        );
      if (c.kind === 'certificate')
        written.set(
          `certificate/${c.name}`,
          run(i, [], (x) => this.upsertCertificate(x)),
        );
    });
    const upserts: Promise<void>[] = [];
    const upserted = new Set<string>();
    changes.forEach((c, i) => {
      if (c.kind !== 'virtualService' || c.op === 'delete') return;
      upserted.add(c.name);
      const deps = [
        ...poolRefs(c.desired).flatMap((p) => written.get(`pool/${p}`) ?? []),
        ...certificateRefs(c.desired).flatMap((n) => written.get(`certificate/${n}`) ?? []),
      ];
      upserts.push(run(i, deps, (x) => this.upsertVirtualService(x)));
    });
    // A rotated certificate may name other hosts: the SNI children of the services using it follow.
    const rotated = changes.filter((c) => c.kind === 'certificate' && c.op === 'update').map((c) => c.name);
    for (const vs of this.applied.values()) {
      if (upserted.has(vs.name) || !certificateRefs(vs).some((n) => rotated.includes(n))) continue;
      const deps = certificateRefs(vs).flatMap((n) => written.get(`certificate/${n}`) ?? []);
      upserts.push(
        (async () => {
          await Promise.all(deps);
          await this.writeVirtualService(vs).catch(() => undefined);
        })(),
      );
    }
    const vsDeletes: Promise<void>[] = [];
    changes.forEach((c, i) => {
      if (c.kind === 'virtualService' && c.op === 'delete')
        vsDeletes.push(run(i, upserts, (x) => this.deleteVirtualService(x)));
    });
    const lastDeletes: Promise<void>[] = [];
    changes.forEach((c, i) => {
      if (c.kind === 'pool' && c.op === 'delete')
        lastDeletes.push(run(i, [...upserts, ...vsDeletes], (x) => this.remove('pool', x.name)));
      if (c.kind === 'certificate' && c.op === 'delete')
        lastDeletes.push(
          run(i, [...upserts, ...vsDeletes], (x) => this.remove('sslkeyandcertificate', x.name)),
        );
    });
    await Promise.all([...written.values(), ...upserts, ...vsDeletes, ...lastDeletes]);
    return results;
  }

  private current(type: AviType, name: string): Raw | undefined {
    return this.cache!.get(type)!.get(name);
  }

  /** The checks every change goes through first: ownership, and that an update has something to update. */
  private precheck(c: Change): void {
    const type: AviType =
      c.kind === 'pool' ? 'pool' : c.kind === 'certificate' ? 'sslkeyandcertificate' : 'virtualservice';
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

  /** A certificate is checked as the controller would before it is sent; rotation updates it in place. */
  private async upsertCertificate(c: Change): Promise<void> {
    if (c.kind !== 'certificate' || c.op === 'delete') return;
    this.precheck(c);
    const bad = certificateProblem(c.desired, this.now());
    if (bad) fail('Invalid', bad, true);
    const o = renderCertificate(c.desired, this.owner, createdBy(this.owner));
    const problems = invalid('sslkeyandcertificate', o as AviObject);
    if (problems.length > 0) fail('Invalid', problems.join('; '), true);
    await this.upsert('sslkeyandcertificate', o as AviObject);
  }

  private async upsertVirtualService(c: Change): Promise<void> {
    if (c.kind !== 'virtualService' || c.op === 'delete') return;
    this.precheck(c);
    await this.writeVirtualService(c.desired);
  }

  /**
   * Writes one virtual service and what it is made of: VsVip, pool groups and DataScript set at
   * once, then its policy set, the service, its SNI children; then what it no longer uses goes.
   */
  private async writeVirtualService(vs: VirtualService): Promise<void> {
    const sniNames = (cert: string) => {
      const o = this.current('sslkeyandcertificate', cert);
      return (o && parseCertificate(o)?.sniNames) ?? [];
    };
    const { children, services } = renderVirtualService(vs, this.owner, this.at, sniNames);
    const problems = [
      ...children.flatMap((p) => invalid(p.type, p.object)),
      ...services.flatMap((o) => invalid('virtualservice', o)),
    ];
    if (problems.length > 0) fail('Invalid', problems.join('; '), true);
    const missing = poolRefs(vs).find((p) => !this.current('pool', p));
    if (missing) fail('DependencyFailed', `pool ${missing} is not on the controller yet`, false);
    const cert = certificateRefs(vs).find((n) => !this.current('sslkeyandcertificate', n));
    if (cert) fail('DependencyFailed', `certificate ${cert} is not on the controller yet`, false);
    // What the scripts and policies refer to first (VsVip, pool groups), then them, then the service.
    const first = children.filter((p) => p.type !== 'httppolicyset' && p.type !== 'vsdatascriptset');
    await Promise.all(first.map((p) => this.upsert(p.type, p.object)));
    await Promise.all(children.filter((p) => !first.includes(p)).map((p) => this.upsert(p.type, p.object)));
    const [parent, ...sni] = services;
    const vipBefore = this.vsVipOf(vs.name);
    await this.upsert('virtualservice', parent!);
    // A VsVip it no longer uses (its VIP moved to or from a group's) goes once nothing uses it.
    if (vipBefore && vipBefore !== this.vsVipOf(vs.name)) await this.removeVsVipIfUnused(vipBefore);
    await Promise.all(sni.map((o) => this.upsert('virtualservice', o)));
    this.applied.set(vs.name, vs);
    const keepSni = new Set(sni.map((o) => o.name));
    for (const name of this.sniChildrenOf(vs.name))
      if (!keepSni.has(name)) await this.remove('virtualservice', name);
    const keep = new Set(children.filter((p) => p.type === 'poolgroup').map((p) => p.object.name));
    if (!children.some((p) => p.type === 'vsdatascriptset')) await this.remove('vsdatascriptset', vs.name);
    for (const name of this.groupsOf(vs.name)) if (!keep.has(name)) await this.remove('poolgroup', name);
  }

  private async deleteVirtualService(c: Change): Promise<void> {
    if (c.kind !== 'virtualService' || c.op !== 'delete') return;
    this.precheck(c);
    for (const name of this.sniChildrenOf(c.name)) await this.remove('virtualservice', name);
    const vip = this.vsVipOf(c.name);
    await this.remove('virtualservice', c.name);
    this.applied.delete(c.name);
    if (c.observed.kind === 'l7') await this.remove('httppolicyset', c.name);
    await this.remove('vsdatascriptset', c.name);
    for (const name of this.groupsOf(c.name)) await this.remove('poolgroup', name);
    if (vip) await this.removeVsVipIfUnused(vip);
  }

  /** The name of the VsVip a virtual service of ours refers to, as last read or written. */
  private vsVipOf(vs: string): string | undefined {
    const ref = this.current('virtualservice', vs)?.vsvip_ref;
    if (!ref) return undefined;
    const uuid = String(ref)
      .replace(/[?#].*$/, '')
      .split('/')
      .pop();
    for (const [name, o] of this.cache!.get('vsvip')!) if (o.uuid === uuid) return name;
    return undefined;
  }

  /** Removes a VsVip of ours that no virtual service refers to any more (shared ones stay while used). */
  private async removeVsVipIfUnused(name: string): Promise<void> {
    const uuid = this.current('vsvip', name)?.uuid;
    if (uuid === undefined) return;
    for (const o of this.cache!.get('virtualservice')!.values())
      if (
        String(o.vsvip_ref ?? '')
          .replace(/[?#].*$/, '')
          .endsWith(`/${String(uuid)}`)
      )
        return;
    await this.remove('vsvip', name);
  }

  /** Our SNI children of one virtual service (by their name, as sniChildName gives it). */
  private sniChildrenOf(vs: string): string[] {
    const prefix = sniChildName(vs, '');
    return [...this.cache!.get('virtualservice')!.entries()]
      .filter(([n, o]) => n.startsWith(prefix) && isSniChild(o) && ownedBy('virtualservice', o, this.owner))
      .map(([n]) => n);
  }

  /** Our poolgroups of one L7 virtual service. */
  private groupsOf(vs: string): string[] {
    const prefix = poolGroupName(vs, '');
    return [...this.cache!.get('poolgroup')!.keys()].filter((n) => n.startsWith(prefix));
  }

  /** Creates or updates one object; a write only when its checksum changed. */
  private async upsert(type: AviType, o: AviObject, retried = false): Promise<void> {
    const cur = this.current(type, o.name);
    if (cur && !ownedBy(type, cur, this.owner))
      fail('NotOwned', `${type} ${o.name} is not ours; left alone`, true);
    if (cur && storedSum(type, cur) === storedSum(type, o)) {
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

function errorText(body: unknown): string {
  if (typeof body === 'string') return body;
  const e = (body as { error?: unknown } | undefined)?.error;
  return typeof e === 'string' ? e : JSON.stringify(body ?? '');
}
