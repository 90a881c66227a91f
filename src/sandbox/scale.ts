/**
 * The scale subresource (`autoscaling/v1` Scale) of Deployments and ReplicaSets, as the API server
 * serves it for `kubectl scale` and autoscalers: GET reads spec.replicas, status.replicas and the
 * selector as a string; PUT and PATCH (JSON, merge or strategic merge: a Scale has no lists) write
 * spec.replicas, with the Scale's resourceVersion as a precondition when it carries one.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import fastJsonPatch, { type Operation } from 'fast-json-patch';
import { decodeObjectBody, decodePatchBody, readBody } from './http-body.ts';
import { writeOptions } from './write-options.ts';
import type { ResourceType } from './kinds.ts';
import type { Json, JsonObject } from './openapi.ts';
import type { PatchType, Registry, WriteOptions } from './registry.ts';
import { badRequest, invalid, methodNotAllowed } from './status.ts';
import { isJsonObject } from './json.ts';

const SCALABLE = new Set(['Deployment', 'ReplicaSet']);

export const hasScale = (t: ResourceType): boolean => t.group === 'apps' && !t.custom && SCALABLE.has(t.kind);

const obj = (v: Json | undefined): JsonObject => (isJsonObject(v) ? v : {});

/** A label selector as `kubectl get --selector` writes it (matchLabels, then expressions). */
function selectorString(sel: JsonObject): string {
  const parts = Object.entries(obj(sel.matchLabels)).map(([k, v]) => `${k}=${String(v)}`);
  for (const e of Array.isArray(sel.matchExpressions) ? sel.matchExpressions.filter(isJsonObject) : []) {
    const values = Array.isArray(e.values) ? e.values.map(String).join(',') : '';
    if (e.operator === 'In') parts.push(`${String(e.key)} in (${values})`);
    else if (e.operator === 'NotIn') parts.push(`${String(e.key)} notin (${values})`);
    else if (e.operator === 'Exists') parts.push(String(e.key));
    else if (e.operator === 'DoesNotExist') parts.push(`!${String(e.key)}`);
  }
  return parts.join(',');
}

/** The Scale of a Deployment or ReplicaSet. */
export function scaleOf(o: JsonObject): JsonObject {
  const m = obj(o.metadata);
  return {
    kind: 'Scale',
    apiVersion: 'autoscaling/v1',
    metadata: {
      name: m.name ?? '',
      namespace: m.namespace ?? '',
      uid: m.uid ?? '',
      resourceVersion: m.resourceVersion ?? '',
      creationTimestamp: m.creationTimestamp ?? null,
    },
    spec: { replicas: Number(obj(o.spec).replicas ?? 1) },
    status: {
      replicas: Number(obj(o.status).replicas ?? 0),
      selector: selectorString(obj(obj(o.spec).selector)),
    },
  };
}

/** Writes a Scale's replicas into its object; returns the new Scale. */
export function writeScale(
  registry: Registry,
  t: ResourceType,
  ns: string,
  name: string,
  scale: Json,
  opts: WriteOptions,
): JsonObject {
  if (!isJsonObject(scale)) throw badRequest('the body is not a Scale');
  const replicas = obj(scale.spec).replicas;
  if (typeof replicas !== 'number' || !Number.isInteger(replicas) || replicas < 0)
    throw invalid('Scale', 'autoscaling', name, [
      {
        reason: 'FieldValueInvalid',
        message: `Invalid value: ${JSON.stringify(replicas ?? null)}: must be greater than or equal to 0`,
        field: 'spec.replicas',
      },
    ]);
  const current = registry.get(t, ns, name).obj;
  const rv = obj(scale.metadata).resourceVersion;
  const next: JsonObject = {
    ...current,
    // A Scale that names a version writes only over that version (a 409 otherwise).
    metadata: {
      ...obj(current.metadata),
      ...(typeof rv === 'string' && rv !== '' ? { resourceVersion: rv } : {}),
    },
    spec: { ...obj(current.spec), replicas },
  };
  return scaleOf(registry.update(t, ns, name, next, undefined, opts).obj);
}

/** A patch of the Scale, applied to the Scale as it is now. */
export function patchScale(current: JsonObject, type: PatchType, patch: Json): Json {
  if (type === 'json') {
    if (!Array.isArray(patch)) throw badRequest('a JSON patch is a list of operations');
    return fastJsonPatch.applyPatch(structuredClone(current), patch as unknown as Operation[], true, false)
      .newDocument as Json;
  }
  if (type === 'apply')
    throw badRequest('server-side apply of the scale subresource is not served by the sandbox');
  const merge = (a: JsonObject, b: JsonObject): JsonObject => {
    const out: JsonObject = { ...a };
    for (const [k, v] of Object.entries(b)) {
      if (v === null) delete out[k];
      else out[k] = isJsonObject(v) && isJsonObject(a[k]) ? merge(a[k] as JsonObject, v) : v;
    }
    return out;
  };
  if (!isJsonObject(patch)) throw badRequest('a merge patch is an object');
  return merge(current, patch);
}

/** GET, PUT and PATCH of the scale subresource; other methods are refused. */
export async function serveScale(
  registry: Registry,
  t: ResourceType,
  ns: string,
  name: string,
  method: string,
  q: URLSearchParams,
  req: IncomingMessage,
  res: ServerResponse,
): Promise<void> {
  const reply = (o: JsonObject) => {
    res.writeHead(200, { 'Content-Type': 'application/json' });
    res.end(JSON.stringify(o));
  };
  if (method === 'GET') return reply(scaleOf(registry.get(t, ns, name).obj));
  const opts = writeOptions(q, req);
  if (method === 'PUT') {
    const body = await decodeObjectBody(req, await readBody(req), registry.openapi);
    return reply(writeScale(registry, t, ns, name, body, opts));
  }
  if (method === 'PATCH') {
    const { type, patch } = await decodePatchBody(req, await readBody(req));
    const patched = patchScale(scaleOf(registry.get(t, ns, name).obj), type, patch);
    return reply(writeScale(registry, t, ns, name, patched, opts));
  }
  throw methodNotAllowed();
}
