/**
 * The Avi Controller simulator's object store: objects by type and uuid with their tenant, url
 * and `_last_modified`; names unique per type and tenant; references by name or url resolved and
 * checked; the field model applied; deletes of referenced objects refused. The HTTP side (sessions,
 * CSRF, faults, paging URLs) is simulator.ts.
 */
import { randomUUID } from 'node:crypto';
import { HttpError } from './http-error.ts';
import { SimIpam } from './ipam.ts';
import { modelProblems, SIM_MODELS as MODEL_OF } from './model-check.ts';
import { persistenceProblem } from './persistence-check.ts';
import { laterFields, OLDEST_VERSION, SYSTEM_OBJECTS, versionProblem, withDefaults } from './defaults.ts';
import { checkedCertificate } from './certificates.ts';

type Json = Record<string, unknown>;

export { HttpError };

/** Ref field -> the object type it must point to. */
const REF_TYPES: Record<string, string> = {
  cloud_ref: 'cloud',
  vrf_ref: 'vrfcontext',
  vrf_context_ref: 'vrfcontext',
  se_group_ref: 'serviceenginegroup',
  tenant_ref: 'tenant',
  pool_ref: 'pool',
  pool_group_ref: 'poolgroup',
  vsvip_ref: 'vsvip',
  health_monitor_refs: 'healthmonitor',
  http_policy_set_ref: 'httppolicyset',
  application_profile_ref: 'applicationprofile',
  network_profile_ref: 'networkprofile',
  application_persistence_profile_ref: 'applicationpersistenceprofile',
  ssl_key_and_certificate_refs: 'sslkeyandcertificate',
  ssl_key_and_certificate_ref: 'sslkeyandcertificate',
  ssl_profile_ref: 'sslprofile',
  pki_profile_ref: 'pkiprofile',
  vh_parent_vs_ref: 'virtualservice',
  vs_datascript_set_ref: 'vsdatascriptset',
  network_ref: 'network',
  protocol_parser_refs: 'protocolparser',
  pool_group_refs: 'poolgroup',
};

/** Types the controller ships with and the simulator serves read-only beyond the field model. */
export const SYSTEM_ONLY = new Set(['networkprofile', 'sslprofile', 'network', 'protocolparser']);
const SERVER_FIELDS = new Set(['uuid', 'url', '_last_modified', 'tenant_ref']);

/** What the controller checks and fills in beyond the field model (certificates). */
function checked(type: string, o: Json): Json {
  if (type !== 'sslkeyandcertificate') return o;
  const r = checkedCertificate(o);
  if (typeof r === 'string') throw new HttpError(400, r);
  return r;
}

export class AviObjectStore {
  /** type -> uuid -> object (as stored, refs as urls). */
  readonly store = new Map<string, Map<string, Json>>();
  private clock = 0;
  /** type -> name -> uuids (names are unique per tenant, not across tenants): lookups by name. */
  private readonly names = new Map<string, Map<string, Set<string>>>();
  /** Avi's IPAM: the networks VsVips with `auto_allocate_ip` get addresses from. */
  private readonly ipam = new SimIpam();

  /** `url`: the simulator's base URL, for absolute references and paging links. */
  constructor(private readonly base: () => string) {
    this.seed();
  }

  private get url(): string {
    return this.base();
  }

  /** Objects of a type in a tenant, by name. */
  objects(type: string, tenant = 'admin'): Map<string, Json> {
    const out = new Map<string, Json>();
    for (const o of this.store.get(type)?.values() ?? []) {
      if (o.tenant_ref === `/api/tenant/${this.tenantUuid(tenant) ?? ''}`) out.set(String(o.name), o);
    }
    return out;
  }

  tenantUuid(name: string): string | undefined {
    for (const [uuid, o] of this.store.get('tenant') ?? []) if (o.name === name) return uuid;
    return undefined;
  }

  put(type: string, o: Json, tenantUuid: string): Json {
    const uuid = String(o.uuid ?? `${type}-${randomUUID()}`);
    const stored: Json = {
      ...o,
      uuid,
      url: `/api/${type}/${uuid}`,
      tenant_ref: `/api/tenant/${tenantUuid}`,
      _last_modified: String(Date.now() * 1000 + (this.clock++ % 1000)),
    };
    let bucket = this.store.get(type);
    if (!bucket) this.store.set(type, (bucket = new Map()));
    const before = bucket.get(uuid);
    if (before) this.unindex(type, before);
    bucket.set(uuid, stored);
    let byName = this.names.get(type);
    if (!byName) this.names.set(type, (byName = new Map()));
    const n = String(stored.name);
    byName.set(n, (byName.get(n) ?? new Set()).add(uuid));
    return stored;
  }

  private unindex(type: string, o: Json): void {
    const uuids = this.names.get(type)?.get(String(o.name));
    uuids?.delete(String(o.uuid));
    if (uuids?.size === 0) this.names.get(type)!.delete(String(o.name));
  }

  /** The objects of a type with this name, in every tenant. */
  private named(type: string, name: unknown): Json[] {
    const bucket = this.store.get(type);
    return [...(this.names.get(type)?.get(String(name)) ?? [])].map((u) => bucket!.get(u)!);
  }

  private seed(): void {
    const admin = 'tenant-admin';
    this.put('tenant', { name: 'admin', uuid: admin }, admin);
    for (const [type, o] of SYSTEM_OBJECTS) this.put(type, o, admin);
  }

  /** A Service Engine group beyond Default-Group (an admin made it; a virtual service may name it). */
  addServiceEngineGroup(name: string): void {
    this.put('serviceenginegroup', { name }, 'tenant-admin');
  }

  /** A network whose addresses VsVips with `auto_allocate_ip` get (Avi's IPAM). */
  addNetwork(name: string, cidr: string, cidr6?: string): void {
    this.put('network', { name, configured_subnets: this.ipam.add(name, cidr, cidr6) }, 'tenant-admin');
  }

  /** The VsVip with its addresses allocated (other types as they are). */
  private allocate(o: Json, current: Json | undefined): Json {
    return this.ipam.allocate(o, current, this.store.get('vsvip')?.values() ?? [], (ref) =>
      String(this.store.get('network')?.get(String(ref).split('/').pop() ?? '')?.name ?? ''),
    );
  }

  private visible(o: Json, tenant: string): boolean {
    return o.tenant_ref === `/api/tenant/${tenant}`;
  }

  get(type: string, uuid: string, tenant: string): Json {
    const o = this.store.get(type)?.get(uuid);
    if (!o || (!this.visible(o, tenant) && !this.visible(o, 'tenant-admin'))) {
      throw new HttpError(404, `Object ${type} ${uuid} not found`);
    }
    return o;
  }

  list(type: string, tenant: string, url: URL, named = false): Json {
    const name = url.searchParams.get('name');
    const createdBy = url.searchParams.get('created_by');
    const pageSize = Math.min(Math.max(Number(url.searchParams.get('page_size') ?? 25) || 25, 1), 200);
    const page = Math.max(Number(url.searchParams.get('page') ?? 1) || 1, 1);
    const all = [...(this.store.get(type)?.values() ?? [])]
      .filter(
        (o) =>
          this.visible(o, tenant) ||
          (tenant !== 'tenant-admin' && this.visible(o, 'tenant-admin') && !o.created_by),
      )
      .filter((o) => name === null || o.name === name)
      .filter((o) => createdBy === null || o.created_by === createdBy)
      .sort((a, b) => String(a.name).localeCompare(String(b.name)));
    const results = all.slice((page - 1) * pageSize, page * pageSize).map((o) => this.externalize(o, named));
    const out: Json = { count: all.length, results };
    if (page * pageSize < all.length) {
      const next = new URL(`${this.url}/api/${type}`);
      url.searchParams.forEach((v, k) => next.searchParams.set(k, v));
      next.searchParams.set('page', String(page + 1));
      next.searchParams.set('page_size', String(pageSize));
      out.next = next.toString();
    }
    return out;
  }

  /**
   * Objects as answered without `#name`, by the stored object and its `_last_modified`: a list of
   * thousands of objects, read page by page, costs the simulator a walk of each object once per
   * version instead of once per read, so its event loop (and the writes waiting behind it) is not
   * held for a walk of every object on every page.
   * With `#name` the names of the objects referred to are read each time (they may change).
   */
  private readonly answered = new WeakMap<Json, { base: string; version: unknown; out: Json }>();

  /** Refs and urls as the controller shows them: absolute, with `#name` when asked (include_name). */
  externalize(stored: Json, named = false): Json {
    const hit = named ? undefined : this.answered.get(stored);
    // An object edited in place (a hand edit on the controller, in tests) has a new _last_modified,
    // as a controller's UI gives it.
    if (hit?.base === this.url && hit.version === stored._last_modified) return hit.out;
    const out = this.externalized(stored, named);
    if (!named) this.answered.set(stored, { base: this.url, version: stored._last_modified, out });
    return out;
  }

  private externalized(stored: Json, named: boolean): Json {
    // A controller never gives a private key back.
    const o = String(stored.url).startsWith('/api/sslkeyandcertificate/')
      ? Object.fromEntries(Object.entries(stored).filter(([k]) => k !== 'key'))
      : stored;
    const nameOf = (ref: string): string => {
      const [, , type, uuid] = ref.split('/');
      return String(this.store.get(type ?? '')?.get(uuid ?? '')?.name ?? '');
    };
    const abs = (v: unknown, field: string): unknown =>
      typeof v === 'string' && v.startsWith('/api/')
        ? `${this.url}${v}${named && field !== 'url' ? `#${nameOf(v)}` : ''}`
        : Array.isArray(v)
          ? v.map((x) => abs(x, field))
          : v;
    const walk = (x: unknown): unknown => {
      if (Array.isArray(x)) return x.map(walk);
      if (!x || typeof x !== 'object') return x;
      return Object.fromEntries(
        Object.entries(x as Json).map(([k, v]) => [
          k,
          k === 'url' || k.endsWith('_ref') || k.endsWith('_refs') ? abs(v, k) : walk(v),
        ]),
      );
    };
    return walk(o) as Json;
  }

  /** Resolves one ref (by name or url) to `/api/<type>/<uuid>`, or fails with 400. */
  private resolve(field: string, value: unknown, tenant: string): string {
    if (typeof value !== 'string') throw new HttpError(400, `${field}: a reference must be a string`);
    const m = /^(?:https?:\/\/[^/]+)?\/api\/([a-z]+)\/?(?:\?name=([^&#]+)|([^/?#]+))?(?:#.*)?$/.exec(value);
    if (!m || (!m[2] && !m[3])) throw new HttpError(400, `${field}: cannot parse reference ${value}`);
    const [, type, name, uuid] = m;
    const want = REF_TYPES[field];
    if (want && want !== type) throw new HttpError(400, `${field}: must refer to a ${want}, not ${value}`);
    const bucket = this.store.get(type!) ?? new Map<string, Json>();
    let found: Json | undefined;
    if (uuid) found = bucket.get(uuid);
    else {
      const n = decodeURIComponent(name!);
      const candidates = this.named(type!, n);
      found =
        candidates.find((o) => this.visible(o, tenant)) ??
        candidates.find((o) => this.visible(o, 'tenant-admin'));
    }
    if (!found || (!this.visible(found, tenant) && !this.visible(found, 'tenant-admin'))) {
      throw new HttpError(400, `${field}: Cannot find object: ${value}`);
    }
    return `/api/${type}/${String(found.uuid)}`;
  }

  private resolveRefs(x: unknown, tenant: string, field = ''): unknown {
    if (field.endsWith('_refs')) {
      if (!Array.isArray(x)) throw new HttpError(400, `${field}: expected an array of references`);
      return x.map((v) => this.resolve(field, v, tenant));
    }
    if (field.endsWith('_ref')) return this.resolve(field, x, tenant);
    if (Array.isArray(x)) return x.map((v) => this.resolveRefs(v, tenant, ''));
    if (!x || typeof x !== 'object') return x;
    return Object.fromEntries(Object.entries(x as Json).map(([k, v]) => [k, this.resolveRefs(v, tenant, k)]));
  }

  private validate(type: string, body: unknown, tenant: string, version: string): Json {
    if (!body || typeof body !== 'object' || Array.isArray(body))
      throw new HttpError(400, 'the body must be a JSON object');
    const clean = Object.fromEntries(Object.entries(body as Json).filter(([k]) => !SERVER_FIELDS.has(k)));
    const tooNew =
      versionProblem(type, clean, version) ??
      (type === 'applicationpersistenceprofile' ? persistenceProblem(clean, version) : undefined);
    if (tooNew) throw new HttpError(400, tooNew);
    // Fields of later object models than the bundled one are checked by version above.
    const later = laterFields(type);
    const older = Object.fromEntries(Object.entries(clean).filter(([k]) => !later.includes(k)));
    const problems = modelProblems(type, older);
    if (problems.length > 0) throw new HttpError(400, problems.join('; '));
    return this.resolveRefs(clean, tenant) as Json;
  }

  private nameTaken(type: string, name: unknown, tenant: string, except?: string): boolean {
    return this.named(type, name).some((o) => this.visible(o, tenant) && o.uuid !== except);
  }

  create(type: string, body: unknown, tenant: string, version = OLDEST_VERSION): Json {
    const o = this.allocate(
      checked(type, withDefaults(type, this.validate(type, body, tenant, version), version)),
      undefined,
    );
    if (this.nameTaken(type, o.name, tenant)) {
      throw new HttpError(409, `${MODEL_OF[type]} object with this Name and Tenant already exists`);
    }
    return this.put(type, o, tenant);
  }

  update(type: string, uuid: string, body: unknown, tenant: string, version = OLDEST_VERSION): Json {
    const current = this.store.get(type)?.get(uuid);
    if (!current || !this.visible(current, tenant))
      throw new HttpError(404, `Object ${type} ${uuid} not found`);
    const stale = (body as Json | null)?._last_modified;
    if (stale !== undefined && stale !== current._last_modified) {
      throw new HttpError(412, 'Concurrent Update Error: the object changed since it was read');
    }
    const o = this.allocate(
      checked(type, withDefaults(type, this.validate(type, body, tenant, version), version)),
      current,
    );
    if (this.nameTaken(type, o.name, tenant, uuid)) {
      throw new HttpError(409, `${MODEL_OF[type]} object with this Name and Tenant already exists`);
    }
    return this.put(type, { ...o, uuid }, tenant);
  }

  remove(type: string, uuid: string, tenant: string, referencedStatus: 400 | 403 = 400): void {
    const current = this.store.get(type)?.get(uuid);
    if (!current || !this.visible(current, tenant))
      throw new HttpError(404, `Object ${type} ${uuid} not found`);
    const target = `/api/${type}/${uuid}`;
    const referrers: string[] = [];
    const refersTo = (x: unknown): boolean =>
      x === target ||
      (Array.isArray(x) ? x.some(refersTo) : !!x && typeof x === 'object' && Object.values(x).some(refersTo));
    for (const [t, bucket] of this.store) {
      for (const o of bucket.values())
        if (o !== current && refersTo(o)) referrers.push(`${MODEL_OF[t] ?? t} ${String(o.name)}`);
    }
    if (referrers.length > 0) {
      throw new HttpError(
        referencedStatus,
        `Cannot delete, object is referred by: [${referrers.map((r) => `'${r}'`).join(', ')}]`,
      );
    }
    this.unindex(type, current);
    this.store.get(type)!.delete(uuid);
  }
}
