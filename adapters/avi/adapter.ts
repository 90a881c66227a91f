/**
 * The Avi adapter. observe() lists our objects (paged, `created_by` filter) and the names of
 * everyone else's; apply() writes children before parents as a pipeline (pools and certificates at
 * once; per virtual service its VsVip and pool groups, then its DataScript and policy sets, then
 * the virtual service and its SNI children, each as soon as what it needs is), then deletes parents
 * before children; a rotated certificate re-renders the SNI children of the services using it.
 * The writes themselves, each only when its checksum changed, are device-objects.ts; paged reads
 * are the session's. 404 on delete is success; other 400s are terminal; 5xx and timeouts are
 * retried by the work queue.
 */
import { isDeepStrictEqual } from 'node:util';
import type {
  ApplyResult,
  Capabilities,
  LoadBalancerAdapter,
  MemberHealth,
} from '../../src/adapter/contract.ts';
import type { Change, Observed } from '../../src/adapter/changes.ts';
import type { VirtualService } from '../../src/model/types.ts';
import {
  type AviObject,
  type AviPlacement,
  type AviType,
  checkMonitorName,
  createdBy,
  renderHealthMonitor,
  renderPool,
} from './objects.ts';
import { pkiProfileName, renderPkiProfile } from './pool-tls.ts';
import { renderSessionProfile, sessionProfileName } from './route-session.ts';
import { clientValidationByHand, removeClientProfiles } from './client-validation.ts';
import { invalid } from './object-schemas.ts';
import { certificateProblem, renderCertificate } from './certificates.ts';
import { aviCapabilities } from './capabilities.ts';
import { certificateRefs, poolRefs } from '../../src/model/refs.ts';
import { poolsHealth } from './runtime-server.ts';
import { AviError, AviSession, type AviSessionOptions } from './session.ts';
import { AviDeviceObjects, fail, Failure } from './device-objects.ts';
import { precheck, renderChecked } from './preflight.ts';
import { observedModel, readAll } from './observed.ts';
import { verifyController } from './verify.ts';

export interface AviAdapterOptions extends AviSessionOptions, Partial<Omit<AviPlacement, 'version'>> {
  owner: string;
  /** Calls in flight at once (default 8). */
  concurrency?: number;
  /** The clock certificates' expiry is checked against (default Date.now). */
  now?: () => number;
}

type Raw = Record<string, unknown>;
/** Runs change i once `deps` settle, recording its result. */
type Run = (i: number, deps: Promise<unknown>[], fn: (c: Change) => Promise<void>) => Promise<void>;

const TYPES: AviType[] = [
  'pool',
  'poolgroup',
  'vsvip',
  'httppolicyset',
  'virtualservice',
  'sslkeyandcertificate',
  'vsdatascriptset',
  'healthmonitor',
  'pkiprofile',
  'applicationprofile',
  'applicationpersistenceprofile',
];

export class AviAdapter implements LoadBalancerAdapter {
  readonly name = 'avi';
  readonly owner: string;
  readonly session: AviSession;
  private at: AviPlacement;
  /** Our objects on the controller and the writes to them (device-objects.ts). */
  private readonly objects: AviDeviceObjects;
  /** Whether the objects were read once (observe) since start. */
  private loaded = false;
  /** Pools of ours found balancing as we never write (observe): written on their next update. */
  private drifted = new Set<string>();
  /** Our virtual services as last observed or written, in the model (for certificate rotations). */
  private readonly applied = new Map<string, VirtualService>();
  private readonly now: () => number;

  constructor(private readonly opts: AviAdapterOptions) {
    this.owner = opts.owner;
    this.session = new AviSession(opts);
    this.objects = new AviDeviceObjects(
      this.session,
      opts.owner,
      new Map(TYPES.map((t) => [t, new Map()])),
      opts.concurrency ?? 8,
    );
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
    return aviCapabilities(this.at.vipNetwork !== undefined, this.at.vipNetwork?.cidr6 !== undefined);
  }

  /** The address Avi's IPAM gave each VIP group (device-objects.ts: kept until a VsVip moves). */
  allocatedVips(): ReadonlyMap<string, string> {
    return this.objects.allocatedVips();
  }

  async verify(): Promise<readonly string[]> {
    const { warnings, at } = await verifyController(this.session, this.at, this.opts);
    this.at = at;
    return warnings;
  }

  /** The Avi Controller answers (one small read of the cloud we use, with a fresh login if needed). */
  async probe(): Promise<void> {
    const r = await this.session.call(
      'GET',
      `/api/cloud?name=${encodeURIComponent(this.at.cloud)}&fields=uuid`,
    );
    if (r.status !== 200) throw new AviError(r.status, `GET /api/cloud answered ${r.status}`);
  }

  async observe(): Promise<Observed> {
    const { read, named } = await readAll(this.session, this.owner);
    const observed = await observedModel(read, named, this.owner);
    for (const t of TYPES) {
      const byName = this.objects.cache.get(t)!;
      byName.clear();
      for (const o of read.get(t) ?? []) byName.set(String(o.name), o);
      this.objects.touch(t);
    }
    this.loaded = true;
    this.applied.clear();
    for (const v of observed.owned.virtualServices) this.applied.set(v.name, v);
    this.drifted = new Set((observed.drifted ?? []).map((d) => d.name));
    return observed;
  }

  /**
   * Members' health: every pool of ours (listed), or `pools` alone (a slice of the controller's
   * rotation: those it holds, by their uuid, one call each; a pool not written yet has none).
   */
  async health(pools?: readonly string[]): Promise<MemberHealth[]> {
    if (!pools || !this.loaded) return poolsHealth(this.session, this.owner);
    const held = pools.flatMap((n) => {
      const o = this.objects.current('pool', n);
      return o ? [{ name: o.name, uuid: o.uuid }] : [];
    });
    return poolsHealth(this.session, this.owner, held);
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
    if (!this.loaded) await this.observe();
    const results: ApplyResult[] = new Array(changes.length);
    const run: Run = async (i, deps, fn) => {
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
    // Certificates and pools at once (a pool presenting a client certificate after it); a
    // virtual service as soon as what it uses is written.
    const written = new Map<string, Promise<void>>();
    changes.forEach((c, i) => {
      if (c.kind === 'certificate' && c.op !== 'delete')
        written.set(
          `certificate/${c.name}`,
          run(i, [], (x) => this.upsertCertificate(x)),
        );
    });
    changes.forEach((c, i) => {
      if (c.kind !== 'pool' || c.op === 'delete') return;
      const presents = c.desired.backendTls?.clientCertificate;
      const deps = presents ? [written.get(`certificate/${presents}`) ?? []].flat() : [];
      written.set(
        `pool/${c.name}`,
        run(i, deps, (x) => this.upsertPool(x)),
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
    // Should that fail, the child reads back stale and the next full observe writes the service.
    const rotated = changes.filter((c) => c.kind === 'certificate' && c.op === 'update').map((c) => c.name);
    for (const vs of rotated.length > 0 ? this.applied.values() : []) {
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
    const lastDeletes = this.lastDeletes(changes, run, [...written.values(), ...upserts, ...vsDeletes]);
    await Promise.all([...written.values(), ...upserts, ...vsDeletes, ...lastDeletes]);
    return results;
  }

  /**
   * Pools (with their own monitor, PKI and persistence profiles) once every write and virtual-service delete is
   * done; certificates last, since a pool may have presented one to its members.
   */
  private lastDeletes(changes: Change[], run: Run, before: Promise<void>[]): Promise<void>[] {
    const poolDeletes: Promise<void>[] = [];
    changes.forEach((c, i) => {
      if (c.kind === 'pool' && c.op === 'delete')
        poolDeletes.push(
          run(i, before, async (x) => {
            await this.objects.remove('pool', x.name);
            await this.objects.remove('healthmonitor', checkMonitorName(x.name));
            await this.objects.remove('pkiprofile', pkiProfileName(x.name));
            await this.objects.remove('applicationpersistenceprofile', sessionProfileName(x.name));
          }),
        );
    });
    const certDeletes: Promise<void>[] = [];
    changes.forEach((c, i) => {
      if (c.kind === 'certificate' && c.op === 'delete')
        certDeletes.push(
          run(i, [...before, ...poolDeletes], (x) => this.objects.remove('sslkeyandcertificate', x.name)),
        );
    });
    return [...poolDeletes, ...certDeletes];
  }

  private current(type: AviType, name: string): Raw | undefined {
    return this.objects.current(type, name);
  }

  private precheck(c: Change): void {
    precheck(c, (t, n) => this.current(t, n), this.owner);
  }

  /**
   * A pool, its own HTTP monitor, (TLS to members) PKI profile and (a route's session cookie)
   * persistence profile first; one it no longer uses goes after.
   */
  private async upsertPool(c: Change): Promise<void> {
    if (c.kind !== 'pool' || c.op === 'delete') return;
    this.precheck(c);
    const o = renderPool(c.desired, this.owner, this.at);
    const hm = c.desired.check ? renderHealthMonitor(c.desired, c.desired.check, this.owner) : undefined;
    const pki = renderPkiProfile(c.desired, this.owner);
    const session = renderSessionProfile(c.desired, this.owner, this.session.apiVersion);
    const problems = [
      ...invalid('pool', o),
      ...(hm ? invalid('healthmonitor', hm) : []),
      ...(pki ? invalid('pkiprofile', pki) : []),
      ...(session && 'problem' in session ? [session.problem] : []),
      ...(session && !('problem' in session) ? invalid('applicationpersistenceprofile', session) : []),
    ];
    if (problems.length > 0) fail('Invalid', problems.join('; '), true);
    // A pool read from its fields unlike ours (or balancing as we never write) was changed by hand:
    // written even where the checksum we left on it still matches (its PKI profile's CAs too).
    const byHand =
      c.op === 'update' && (this.drifted.has(c.name) || !isDeepStrictEqual(c.observed, c.desired));
    if (hm) await this.objects.upsert('healthmonitor', hm);
    if (pki) await this.objects.upsert('pkiprofile', pki, byHand);
    if (session && !('problem' in session))
      await this.objects.upsert('applicationpersistenceprofile', session, byHand);
    await this.objects.upsert('pool', o, byHand);
    this.drifted.delete(c.name);
    if (!hm) await this.objects.remove('healthmonitor', checkMonitorName(c.desired.name));
    if (!pki) await this.objects.remove('pkiprofile', pkiProfileName(c.desired.name));
    if (!session)
      await this.objects.remove('applicationpersistenceprofile', sessionProfileName(c.desired.name));
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
    await this.objects.upsert('sslkeyandcertificate', o as AviObject);
  }

  private async upsertVirtualService(c: Change): Promise<void> {
    if (c.kind !== 'virtualService' || c.op === 'delete') return;
    this.precheck(c);
    await this.writeVirtualService(c.desired, clientValidationByHand(c));
  }

  /**
   * Writes one virtual service and what it is made of: VsVip, pool groups and DataScript set at
   * once, then its policy set, the service, its SNI children; then what it no longer uses goes.
   */
  private async writeVirtualService(vs: VirtualService, byHand = false): Promise<void> {
    const { children, services } = renderChecked(vs, this.owner, this.at, (t, n) => this.current(t, n));
    // What the scripts and policies refer to first (VsVip, pool groups), then them, then the service.
    const first = children.filter(
      (p) => p.type !== 'httppolicyset' && p.type !== 'vsdatascriptset' && p.type !== 'applicationprofile',
    );
    const forced = (t: string) => byHand && (t === 'pkiprofile' || t === 'applicationprofile');
    await Promise.all(first.map((p) => this.objects.upsert(p.type, p.object, forced(p.type))));
    await Promise.all(
      children
        .filter((p) => !first.includes(p))
        .map((p) => this.objects.upsert(p.type, p.object, forced(p.type))),
    );
    const [parent, ...sni] = services;
    const vipBefore = this.objects.vsVipOf(vs.name);
    await this.objects.upsert('virtualservice', parent!);
    // A VsVip it no longer uses (its VIP moved to or from a group's) goes once nothing uses it.
    if (vipBefore && vipBefore !== this.objects.vsVipOf(vs.name))
      await this.objects.removeVsVipIfUnused(vipBefore);
    await Promise.all(sni.map((o) => this.objects.upsert('virtualservice', o)));
    this.applied.set(vs.name, vs);
    const keepSni = new Set(sni.map((o) => o.name));
    for (const name of this.objects.sniChildrenOf(vs.name))
      if (!keepSni.has(name)) await this.objects.remove('virtualservice', name);
    const keep = new Set(children.filter((p) => p.type === 'poolgroup').map((p) => p.object.name));
    if (!children.some((p) => p.type === 'vsdatascriptset'))
      await this.objects.remove('vsdatascriptset', vs.name);
    // Client certificates no longer asked: the profiles go once the service points elsewhere.
    if (!children.some((p) => p.type === 'applicationprofile'))
      await removeClientProfiles(this.objects, vs.name);
    for (const name of this.objects.groupsOf(vs.name))
      if (!keep.has(name)) await this.objects.remove('poolgroup', name);
  }

  private async deleteVirtualService(c: Change): Promise<void> {
    if (c.kind !== 'virtualService' || c.op !== 'delete') return;
    this.precheck(c);
    for (const name of this.objects.sniChildrenOf(c.name)) await this.objects.remove('virtualservice', name);
    const vip = this.objects.vsVipOf(c.name);
    await this.objects.remove('virtualservice', c.name);
    this.applied.delete(c.name);
    if (c.observed.kind === 'l7') await this.objects.remove('httppolicyset', c.name);
    await this.objects.remove('vsdatascriptset', c.name);
    await removeClientProfiles(this.objects, c.name);
    for (const name of this.objects.groupsOf(c.name)) await this.objects.remove('poolgroup', name);
    if (vip) await this.objects.removeVsVipIfUnused(vip);
  }

  /** Writes made and skipped (unchanged checksum), for tests and benchmarks. */
  get stats(): AviDeviceObjects['stats'] {
    return this.objects.stats;
  }

  async close(): Promise<void> {
    await this.session.close();
  }
}
