/**
 * The verbs of the API server over the store: create, get, list, update, patch, delete, with the
 * status subresource rules, finalizers, preconditions, defaulting, validation and field pruning.
 */
import { randomUUID } from 'node:crypto';
import { isDeepStrictEqual } from 'node:util';
import { applyDefaults, initialStatus, validateUpdate } from './defaults.ts';
import { coreToEventsV1 } from './event-versions.ts';
import { apiVersionOf, RESOURCE_TYPES, type ResourceType, storageKey } from './kinds.ts';
import type { Json, JsonObject, OpenApi } from './openapi.ts';
import { jsonPatch, mergePatch, StrategicMerge } from './patch.ts';
import { type FieldSelector, fieldValue, type LabelSelector, matchFields, matchLabels } from './selectors.ts';
import { ApiError, alreadyExists, badRequest, conflict, invalid, notFound } from './status.ts';
import { metadataOf, type Store, type StoredObject } from './store.ts';
import { validateObject } from './validate.ts';
import { decodeObject } from './decode.ts';
import { now, sameButManagedTimes, withoutMetaAndStatus } from './object-rules.ts';
import { FieldManagers } from './field-managers.ts';
import type { TypeCatalog } from './catalog.ts';
import { CustomKinds, isCrd } from './crd/custom-kinds.ts';
import type { Logger } from '../runtime/logger.ts';
import { silentLogger } from '../runtime/logger.ts';
import { DEFAULT_NODE_PORT_RANGE, type PortRange, ServiceAllocator } from './allocator.ts';
import { chartDefaults, validateChartKind } from './chart-kinds.ts';
import { graceSeconds } from './kubelet.ts';
import { emptyNamespace, finalizeNamespaceIfEmpty, requireLiveNamespace } from './namespace-lifecycle.ts';

export type { DeleteOptions, FieldValidation, PatchType, WriteOptions } from './registry-options.ts';
import type { DeleteOptions, PatchType, WriteOptions } from './registry-options.ts';
import { isJsonObject } from './json.ts';
import { checkPreconditions, markedForDeletion } from './deletion.ts';

const ALLOW_CREATE_ON_UPDATE = new Set(['Lease', 'Endpoints', 'Event']);
const GENERATE_ALPHABET = 'bcdfghjklmnpqrstvwxz2456789';

export class Registry {
  private readonly smp: StrategicMerge;
  private readonly custom: CustomKinds;
  readonly fields: FieldManagers;

  private readonly allocator: ServiceAllocator;
  /** Whether a kubelet runs this Pod (set by the workload controller): its deletion is graceful. */
  gracefulPod: ((t: ResourceType, obj: JsonObject) => boolean) | undefined;

  constructor(
    readonly store: Store,
    readonly openapi: OpenApi,
    nodePortRange: PortRange = DEFAULT_NODE_PORT_RANGE,
    /** The sandbox's log (its controllers' failed passes go there too). */
    readonly log: Logger = silentLogger(),
  ) {
    this.custom = new CustomKinds(store, log);
    this.smp = new StrategicMerge(openapi);
    this.fields = new FieldManagers(openapi);
    const services = RESOURCE_TYPES.find((x) => x.kind === 'Service')!;
    this.allocator = new ServiceAllocator(store, storageKey(services), nodePortRange);
  }

  /** The kinds served now: built-in ones and those of the stored CRDs. */
  get types(): TypeCatalog {
    return this.custom.types;
  }

  /** The object as the API version `t` shows it (a custom kind's other served versions show the same fields). */
  view(t: ResourceType, obj: JsonObject): JsonObject {
    if (t.group === 'events.k8s.io') return coreToEventsV1(obj);
    if (t.custom && obj.apiVersion !== apiVersionOf(t)) return { ...obj, apiVersion: apiVersionOf(t) };
    return obj;
  }

  viewJson(t: ResourceType, s: StoredObject): string {
    if (t.group === 'events.k8s.io' || (t.custom && s.obj.apiVersion !== apiVersionOf(t)))
      return JSON.stringify(this.view(t, s.obj));
    return s.json;
  }

  matches(t: ResourceType, obj: JsonObject, labels: LabelSelector, fields: FieldSelector): boolean {
    const meta = metadataOf(obj);
    if (
      !matchLabels(labels, isJsonObject(meta.labels) ? (meta.labels as Record<string, string>) : undefined)
    ) {
      return false;
    }
    if (fields.length === 0) return true;
    const v = this.view(t, obj);
    return matchFields(fields, (f) => fieldValue(v, f));
  }

  get(t: ResourceType, namespace: string, name: string): StoredObject {
    const s = this.find(t, namespace, name);
    if (!s) throw notFound(t, name);
    return s;
  }

  /** The object, or undefined (`namespace` ignored for a cluster-scoped kind). */
  find(t: ResourceType, namespace: string, name: string): StoredObject | undefined {
    return this.store.get(storageKey(t), t.namespaced ? namespace : '', name);
  }

  list(
    t: ResourceType,
    namespace: string | undefined,
    labels: LabelSelector,
    fields: FieldSelector,
  ): StoredObject[] {
    return this.store.list(storageKey(t), namespace).filter((s) => this.matches(t, s.obj, labels, fields));
  }

  /**
   * A page of that list: at most `limit` objects (0: all) after the key `after` (namespace/name),
   * and whether more match after them.
   */
  page(
    t: ResourceType,
    namespace: string | undefined,
    labels: LabelSelector,
    fields: FieldSelector,
    after: string | undefined,
    limit: number,
  ): { items: StoredObject[]; more: boolean } {
    const items: StoredObject[] = [];
    for (const s of this.store.listFrom(storageKey(t), namespace, after)) {
      if (!this.matches(t, s.obj, labels, fields)) continue;
      if (limit > 0 && items.length === limit) return { items, more: true };
      items.push(s);
    }
    return { items, more: false };
  }

  private checkNamespace(t: ResourceType, namespace: string, obj: JsonObject): void {
    const meta = metadataOf(obj);
    if (!t.namespaced) {
      delete meta.namespace;
      return;
    }
    if (meta.namespace !== undefined && meta.namespace !== '' && meta.namespace !== namespace) {
      throw badRequest(
        'the namespace of the provided object does not match the namespace sent on the request',
      );
    }
    meta.namespace = namespace;
  }

  private finish(t: ResourceType, obj: JsonObject, old: JsonObject | undefined): void {
    if (t.custom) {
      const causes = this.custom.check(t, obj, old);
      const meta = metadataOf(obj);
      if (causes.length > 0)
        throw invalid(t.kind, t.group, String(meta.name ?? meta.generateName ?? ''), causes);
      return;
    }
    if (isCrd(t)) {
      const causes = this.custom.checkCrd(obj, now());
      if (causes.length > 0) throw invalid(t.kind, t.group, String(metadataOf(obj).name ?? ''), causes);
    }
    const allocation = applyDefaults(t, obj, old, this.allocator);
    chartDefaults(t, obj);
    const meta = metadataOf(obj);
    const causes = [
      ...allocation,
      ...validateObject(t, obj),
      ...validateChartKind(t, obj, old),
      ...(old ? validateUpdate(t, obj, old) : []),
    ];
    if (causes.length > 0)
      throw invalid(t.kind, t.group, String(meta.name ?? meta.generateName ?? ''), causes);
  }

  create(t: ResourceType, namespace: string, body: Json, opts: WriteOptions): StoredObject {
    const obj = decodeObject(this.openapi, this.custom, t, body, opts);
    this.checkNamespace(t, namespace, obj);
    const meta = metadataOf(obj);
    if (meta.resourceVersion !== undefined && meta.resourceVersion !== '') {
      throw badRequest('resourceVersion should not be set on objects to be created');
    }
    if (t.namespaced) requireLiveNamespace(this.store, namespace);
    if (!meta.name && typeof meta.generateName === 'string' && meta.generateName) {
      let suffix = '';
      for (let i = 0; i < 5; i++)
        suffix += GENERATE_ALPHABET[Math.floor(Math.random() * GENERATE_ALPHABET.length)];
      meta.name = `${meta.generateName}${suffix}`;
    }
    meta.uid = randomUUID();
    meta.creationTimestamp = now();
    for (const k of ['deletionTimestamp', 'deletionGracePeriodSeconds', 'managedFields', 'selfLink'])
      delete meta[k];
    if (t.kind !== 'Event' && t.kind !== 'Lease') meta.generation = 1;
    if (t.group === '' && t.kind === 'Namespace') {
      meta.labels = {
        ...(isJsonObject(meta.labels) ? meta.labels : {}),
        'kubernetes.io/metadata.name': String(meta.name ?? ''),
      };
      // As the namespace strategy: the finalizers given, with `kubernetes` added when missing.
      const given = isJsonObject(obj.spec) && Array.isArray(obj.spec.finalizers) ? obj.spec.finalizers : [];
      obj.spec = { finalizers: given.includes('kubernetes') ? given : [...given, 'kubernetes'] };
    }
    const status = initialStatus(t, obj);
    if (status === undefined) delete obj.status;
    else obj.status = status;
    this.finish(t, obj, undefined);
    this.fields.manage(t, undefined, obj, opts);
    const name = String(meta.name);
    if (this.store.get(storageKey(t), t.namespaced ? namespace : '', name)) throw alreadyExists(t, name);
    if (opts.dryRun) return { obj, json: JSON.stringify(obj) };
    const out = this.store.commit(storageKey(t), 'ADDED', obj);
    if (isCrd(t)) this.custom.serve(out.obj);
    return out;
  }

  update(
    t: ResourceType,
    namespace: string,
    name: string,
    body: Json,
    subresource: 'status' | undefined,
    opts: WriteOptions,
  ): StoredObject {
    const next = decodeObject(this.openapi, this.custom, t, body, opts);
    const meta = metadataOf(next);
    if (meta.name !== undefined && meta.name !== name) {
      throw badRequest(
        `the name of the object (${String(meta.name)}) does not match the name on the URL (${name})`,
      );
    }
    meta.name = name;
    this.checkNamespace(t, namespace, next);
    const ns = t.namespaced ? namespace : '';
    const existing = this.store.get(storageKey(t), ns, name);
    if (!existing) {
      if (subresource || !ALLOW_CREATE_ON_UPDATE.has(t.kind)) throw notFound(t, name);
      delete meta.resourceVersion;
      return this.create(t, namespace, this.view(t, next), opts);
    }
    return this.replace(t, existing, next, subresource, opts);
  }

  private replace(
    t: ResourceType,
    existing: StoredObject,
    next: JsonObject,
    subresource: 'status' | undefined,
    opts: WriteOptions,
  ): StoredObject {
    const old = existing.obj;
    const oldMeta = metadataOf(old);
    const meta = metadataOf(next);
    const name = String(oldMeta.name);
    if (
      meta.resourceVersion !== undefined &&
      meta.resourceVersion !== '' &&
      meta.resourceVersion !== oldMeta.resourceVersion
    ) {
      throw conflict(t, name);
    }
    let out: JsonObject;
    if (subresource === 'status') {
      // The status endpoint takes status, labels and annotations; everything else stays as stored.
      out = structuredClone(old);
      const outMeta = metadataOf(out);
      if (next.status === undefined) delete out.status;
      else out.status = next.status;
      for (const k of ['labels', 'annotations'] as const) {
        if (meta[k] === undefined) delete outMeta[k];
        else outMeta[k] = meta[k];
      }
    } else {
      out = next;
      if (t.hasStatus) {
        if (old.status === undefined) delete out.status;
        else out.status = structuredClone(old.status);
      }
      for (const k of [
        'uid',
        'creationTimestamp',
        'deletionTimestamp',
        'deletionGracePeriodSeconds',
        'generation',
        'namespace',
      ]) {
        if (oldMeta[k] === undefined) delete meta[k];
        else meta[k] = oldMeta[k];
      }
      delete meta.managedFields;
      // A namespace's finalizers change only through its finalize subresource: an update keeps them.
      if (t.group === '' && t.kind === 'Namespace') out.spec = structuredClone(old.spec ?? {});
    }
    this.finish(t, out, old);
    if (subresource !== 'status') this.fields.manage(t, old, out, opts);
    const outMeta = metadataOf(out);
    outMeta.resourceVersion = String(oldMeta.resourceVersion);
    // As kube-apiserver's IgnoreManagedFieldsTimestampsTransformer: a write that changes nothing
    // but the time on managedFields entries is no write at all.
    if (isDeepStrictEqual(out, old) || sameButManagedTimes(out, old)) return existing;
    if (
      subresource !== 'status' &&
      typeof oldMeta.generation === 'number' &&
      !isDeepStrictEqual(withoutMetaAndStatus(out), withoutMetaAndStatus(old))
    ) {
      outMeta.generation = oldMeta.generation + 1;
    }
    if (opts.dryRun) return { obj: out, json: JSON.stringify(out) };
    const finalizers = Array.isArray(outMeta.finalizers) ? outMeta.finalizers : [];
    if (outMeta.deletionTimestamp && finalizers.length === 0) return this.remove(t, out);
    const committed = this.store.commit(storageKey(t), 'MODIFIED', out);
    if (isCrd(t)) this.custom.serve(committed.obj);
    return committed;
  }

  patch(
    t: ResourceType,
    namespace: string,
    name: string,
    type: PatchType,
    patch: Json,
    subresource: 'status' | undefined,
    opts: WriteOptions,
  ): StoredObject {
    const existing = this.get(t, t.namespaced ? namespace : '', name);
    const current = structuredClone(this.view(t, existing.obj));
    let patched: JsonObject;
    if (type === 'json') patched = jsonPatch(current, patch);
    else if (type === 'merge') {
      const m = mergePatch(current, patch);
      if (!isJsonObject(m)) throw badRequest('merge patch must be a JSON object');
      patched = m;
    } else {
      const schema = t.custom ? undefined : this.openapi.definition(t.definition);
      if (!schema)
        throw new ApiError(
          415,
          'UnsupportedMediaType',
          'the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml',
        );
      patched = this.smp.apply(current, patch, schema);
    }
    const next = decodeObject(this.openapi, this.custom, t, patched, opts);
    const meta = metadataOf(next);
    if (meta.name !== name)
      throw badRequest(
        `the name of the object (${String(meta.name)}) does not match the name on the URL (${name})`,
      );
    this.checkNamespace(t, namespace, next);
    return this.replace(t, existing, next, subresource, opts);
  }

  delete(t: ResourceType, namespace: string, name: string, opts: DeleteOptions): StoredObject {
    const existing = this.get(t, t.namespaced ? namespace : '', name);
    const meta = metadataOf(existing.obj);
    checkPreconditions(t, name, meta, opts.preconditions);
    // A Pod a kubelet runs is deleted gracefully: marked (deletionTimestamp, its grace period) and
    // left to that kubelet to stop (its preStop), which deletes it again with a grace of 0.
    const grace = this.gracefulPod?.(t, existing.obj)
      ? graceSeconds(existing.obj, opts.gracePeriodSeconds)
      : 0;
    if (grace > 0) {
      const shorter =
        meta.deletionGracePeriodSeconds === undefined || grace < Number(meta.deletionGracePeriodSeconds);
      if (opts.dryRun || (meta.deletionTimestamp && !shorter)) return existing;
      const at = new Date(Date.now() + grace * 1000).toISOString().replace(/\.\d{3}Z$/, 'Z');
      return this.store.commit(storageKey(t), 'MODIFIED', markedForDeletion(existing.obj, at, grace));
    }
    const finalizers = Array.isArray(meta.finalizers) ? meta.finalizers : [];
    const isNamespace = t.group === '' && t.kind === 'Namespace';
    if (finalizers.length > 0 || isNamespace) {
      if (meta.deletionTimestamp) return existing;
      const next = markedForDeletion(existing.obj, now(), 0);
      if (isNamespace) next.status = { phase: 'Terminating' };
      if (opts.dryRun) return { obj: next, json: JSON.stringify(next) };
      const out = this.store.commit(storageKey(t), 'MODIFIED', next);
      if (isNamespace) {
        emptyNamespace(this, name);
        return this.store.get(storageKey(t), '', name) ?? out;
      }
      return out;
    }
    if (opts.dryRun) return existing;
    return this.remove(t, structuredClone(existing.obj));
  }

  private remove(t: ResourceType, obj: JsonObject): StoredObject {
    if (isCrd(t)) this.custom.withdraw(obj);
    const out = this.store.commit(storageKey(t), 'DELETED', obj);
    const ns = metadataOf(obj).namespace;
    if (t.namespaced && typeof ns === 'string') finalizeNamespaceIfEmpty(this.store, ns, this.types.all());
    return out;
  }
}
