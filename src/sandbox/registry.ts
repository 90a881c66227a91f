/**
 * The verbs of the API server over the store: create, get, list, update, patch, delete, with the
 * status subresource rules, finalizers, preconditions, defaulting, validation and field pruning.
 */
import { randomUUID } from 'node:crypto';
import { isDeepStrictEqual } from 'node:util';
import { applyDefaults, initialStatus, validateUpdate } from './defaults.ts';
import { coreToEventsV1, eventsV1ToCore } from './event-versions.ts';
import { apiVersionOf, RESOURCE_TYPES, type ResourceType, storageKey } from './kinds.ts';
import type { Json, JsonObject, OpenApi } from './openapi.ts';
import { jsonPatch, mergePatch, StrategicMerge } from './patch.ts';
import { pruneToSchema } from './prune.ts';
import { type FieldSelector, fieldValue, type LabelSelector, matchFields, matchLabels } from './selectors.ts';
import {
  ApiError,
  alreadyExists,
  badRequest,
  conflict,
  invalid,
  notFound,
  type StatusCause,
} from './status.ts';
import { metadataOf, type Store, type StoredObject } from './store.ts';
import { validateMetadata, validateObject } from './validate.ts';
import { TypeCatalog } from './catalog.ts';
import { crdStatus, typesOf, validateCrd } from './crd/definition.ts';
import {
  applyDefaults as applySchemaDefaults,
  prune as pruneCustom,
  TYPE_INVALID,
  validate as validateSchema,
} from './crd/structural.ts';
import { skippedRules, validateRules } from './crd/cel-rules.ts';
import type { Logger } from '../runtime/logger.ts';
import { silentLogger } from '../runtime/logger.ts';
import { DEFAULT_NODE_PORT_RANGE, type PortRange, ServiceAllocator } from './allocator.ts';
import { chartDefaults, validateChartKind } from './chart-kinds.ts';
import { emptyNamespace, finalizeNamespaceIfEmpty, requireLiveNamespace } from './namespace-lifecycle.ts';

export type FieldValidation = 'Strict' | 'Warn' | 'Ignore';
export type PatchType = 'json' | 'merge' | 'strategic';

export interface WriteOptions {
  dryRun: boolean;
  fieldValidation: FieldValidation;
  /** Warnings for the `Warning` response header (unknown fields under Warn). */
  warnings: string[];
}

export interface DeleteOptions {
  dryRun: boolean;
  preconditions?: { uid?: string; resourceVersion?: string };
}

const ALLOW_CREATE_ON_UPDATE = new Set(['Lease', 'Endpoints', 'Event']);
const GENERATE_ALPHABET = 'bcdfghjklmnpqrstvwxz2456789';

const isObject = (v: Json | undefined): v is JsonObject =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

function now(): string {
  return new Date().toISOString().replace(/\.\d{3}Z$/, 'Z');
}

function withoutMetaAndStatus(o: JsonObject): JsonObject {
  const { metadata, status, ...rest } = o;
  void metadata;
  void status;
  return rest;
}

const isCrd = (t: ResourceType): boolean =>
  t.group === 'apiextensions.k8s.io' && t.kind === 'CustomResourceDefinition';

export class Registry {
  private readonly smp: StrategicMerge;
  /** The kinds served now: built-in ones and those of the stored CRDs. */
  readonly types = new TypeCatalog();
  /** CEL rules already reported as skipped (each is logged once). */
  private readonly reportedRules = new Set<string>();

  private readonly allocator: ServiceAllocator;

  constructor(
    readonly store: Store,
    readonly openapi: OpenApi,
    nodePortRange: PortRange = DEFAULT_NODE_PORT_RANGE,
    private readonly log: Logger = silentLogger(),
  ) {
    this.smp = new StrategicMerge(openapi);
    const services = RESOURCE_TYPES.find((x) => x.kind === 'Service')!;
    this.allocator = new ServiceAllocator(store, storageKey(services), nodePortRange);
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
    if (!matchLabels(labels, isObject(meta.labels) ? (meta.labels as Record<string, string>) : undefined)) {
      return false;
    }
    if (fields.length === 0) return true;
    const v = this.view(t, obj);
    return matchFields(fields, (f) => fieldValue(v, f));
  }

  get(t: ResourceType, namespace: string, name: string): StoredObject {
    const s = this.store.get(storageKey(t), namespace, name);
    if (!s) throw notFound(t, name);
    return s;
  }

  list(
    t: ResourceType,
    namespace: string | undefined,
    labels: LabelSelector,
    fields: FieldSelector,
  ): StoredObject[] {
    return this.store.list(storageKey(t), namespace).filter((s) => this.matches(t, s.obj, labels, fields));
  }

  /** Decodes a request body into the stored shape: kind checks, pruning, events conversion. */
  private decode(t: ResourceType, body: Json, opts: WriteOptions): JsonObject {
    if (!isObject(body))
      throw badRequest(
        `${t.kind} in version "${t.version}" cannot be handled as a ${t.kind}: the body must be a JSON object`,
      );
    const av = body.apiVersion;
    if (av !== undefined && av !== apiVersionOf(t)) {
      throw badRequest(
        `the API version in the data (${String(av)}) does not match the expected API version (${apiVersionOf(t)})`,
      );
    }
    if (body.kind !== undefined && body.kind !== t.kind) {
      throw badRequest(
        `the kind in the data (${String(body.kind)}) does not match the expected kind (${t.kind})`,
      );
    }
    const schema = t.custom ? undefined : this.openapi.definition(t.definition);
    let obj = body;
    if (t.custom) {
      const unknown = pruneCustom(obj, t.custom.schema);
      this.reportUnknown(unknown, opts);
    } else if (schema) {
      const { value, unknown } = pruneToSchema(
        this.openapi,
        body,
        schema,
        `${t.kind} in version "${t.version}" cannot be handled as a ${t.kind}`,
      );
      this.reportUnknown(unknown, opts);
      obj = value;
    }
    obj.apiVersion = apiVersionOf(t);
    obj.kind = t.kind;
    obj.metadata = isObject(obj.metadata) ? obj.metadata : {};
    return t.group === 'events.k8s.io' ? eventsV1ToCore(obj) : obj;
  }

  private reportUnknown(unknown: string[], opts: WriteOptions): void {
    if (unknown.length > 0 && opts.fieldValidation === 'Strict') {
      throw badRequest(`strict decoding error: ${unknown.map((u) => `unknown field "${u}"`).join(', ')}`);
    }
    if (opts.fieldValidation === 'Warn') opts.warnings.push(...unknown.map((u) => `unknown field "${u}"`));
  }

  /** A custom object's causes: metadata, then its schema, then (when the schema holds) its CEL rules. */
  private validateCustom(t: ResourceType, obj: JsonObject, old: JsonObject | undefined): StatusCause[] {
    const schema = t.custom?.schema;
    const causes = validateMetadata(t, obj);
    if (!schema) return causes;
    const structural = validateSchema(obj, schema, '');
    if (structural.some((c) => c.reason === TYPE_INVALID)) {
      const skipped = {
        reason: 'FieldValueInvalid',
        message:
          'Invalid value: "": some validation rules were not checked because the object was invalid; correct the existing errors to complete validation',
        field: '<nil>',
      };
      return [...causes, ...structural, skipped];
    }
    return [...causes, ...structural, ...validateRules(obj, old, schema)];
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
      applySchemaDefaults(obj, t.custom.schema);
      const causes = this.validateCustom(t, obj, old);
      const meta = metadataOf(obj);
      if (causes.length > 0)
        throw invalid(t.kind, t.group, String(meta.name ?? meta.generateName ?? ''), causes);
      return;
    }
    if (isCrd(t)) {
      const causes = validateCrd(obj, (g, p) => this.types.isBuiltIn(g, p));
      if (causes.length > 0) throw invalid(t.kind, t.group, String(metadataOf(obj).name ?? ''), causes);
      obj.status = crdStatus(obj, now());
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
    const obj = this.decode(t, body, opts);
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
        ...(isObject(meta.labels) ? meta.labels : {}),
        'kubernetes.io/metadata.name': String(meta.name ?? ''),
      };
      obj.spec = { finalizers: ['kubernetes'] };
    }
    const status = initialStatus(t, obj);
    if (status === undefined) delete obj.status;
    else obj.status = status;
    this.finish(t, obj, undefined);
    const name = String(meta.name);
    if (this.store.get(storageKey(t), t.namespaced ? namespace : '', name)) throw alreadyExists(t, name);
    if (opts.dryRun) return { obj, json: JSON.stringify(obj) };
    const out = this.store.commit(storageKey(t), 'ADDED', obj);
    if (isCrd(t)) this.serveCrd(out.obj);
    return out;
  }

  /** Serves (or stops serving) the kinds of a stored CRD; its rules the CEL library cannot run are logged once. */
  private serveCrd(crd: JsonObject): void {
    const name = String(metadataOf(crd).name);
    const types = typesOf(crd);
    this.types.setCustom(name, types);
    for (const t of types) {
      for (const r of skippedRules(t.custom?.schema)) {
        if (this.reportedRules.has(r.rule)) continue;
        this.reportedRules.add(r.rule);
        this.log.warn(
          { crd: name, version: t.version, rule: r.rule, reason: r.reason },
          'CEL rule skipped: the evaluator cannot run it',
        );
      }
    }
  }

  update(
    t: ResourceType,
    namespace: string,
    name: string,
    body: Json,
    subresource: 'status' | undefined,
    opts: WriteOptions,
  ): StoredObject {
    const next = this.decode(t, body, opts);
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
      if (t.group === '' && t.kind === 'Namespace' && out.spec === undefined) out.spec = old.spec ?? {};
    }
    this.finish(t, out, old);
    const outMeta = metadataOf(out);
    outMeta.resourceVersion = String(oldMeta.resourceVersion);
    if (isDeepStrictEqual(out, old)) return existing;
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
    if (isCrd(t)) this.serveCrd(committed.obj);
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
      if (!isObject(m)) throw badRequest('merge patch must be a JSON object');
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
    const next = this.decode(t, patched, opts);
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
    const pre = opts.preconditions;
    if (pre?.uid && pre.uid !== meta.uid) {
      throw conflict(
        t,
        name,
        `Precondition failed: UID in precondition: ${pre.uid}, UID in object meta: ${String(meta.uid)}`,
      );
    }
    if (pre?.resourceVersion && pre.resourceVersion !== meta.resourceVersion) {
      throw conflict(
        t,
        name,
        `Precondition failed: ResourceVersion in precondition: ${pre.resourceVersion}, ResourceVersion in object meta: ${String(meta.resourceVersion)}`,
      );
    }
    const finalizers = Array.isArray(meta.finalizers) ? meta.finalizers : [];
    const isNamespace = t.group === '' && t.kind === 'Namespace';
    if (finalizers.length > 0 || isNamespace) {
      if (meta.deletionTimestamp) return existing;
      const next = structuredClone(existing.obj);
      const nm = metadataOf(next);
      nm.deletionTimestamp = now();
      nm.deletionGracePeriodSeconds = 0;
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
    if (isCrd(t)) this.removeCustomObjects(String(metadataOf(obj).name));
    const out = this.store.commit(storageKey(t), 'DELETED', obj);
    const ns = metadataOf(obj).namespace;
    if (t.namespaced && typeof ns === 'string') finalizeNamespaceIfEmpty(this.store, ns, this.types.all());
    return out;
  }

  /** A CRD going takes its objects with it (the apiextensions finalizer's clean-up), then stops serving them. */
  private removeCustomObjects(crdName: string): void {
    const types = this.types.customOf(crdName);
    const first = types[0];
    if (first) {
      for (const s of this.store.list(storageKey(first), undefined)) {
        this.store.commit(storageKey(first), 'DELETED', structuredClone(s.obj));
      }
    }
    this.types.setCustom(crdName, []);
  }
}
