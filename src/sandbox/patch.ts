/**
 * The three patch types the API server accepts: JSON merge patch (RFC 7386), JSON patch (RFC 6902)
 * and strategic merge patch, whose list semantics come from the OpenAPI extensions
 * `x-kubernetes-patch-strategy` and `x-kubernetes-patch-merge-key`.
 */
import fastJsonPatch from 'fast-json-patch';
import type { Json, JsonObject, OpenApi, Schema } from './openapi.ts';
import { ApiError, badRequest } from './status.ts';
import { getKey, setKey } from './json-keys.ts';
import { isJsonObject } from './json.ts';

export function mergePatch(target: Json | undefined, patch: Json): Json {
  if (!isJsonObject(patch)) return patch;
  const out: JsonObject = isJsonObject(target) ? { ...target } : {};
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) delete out[k];
    else setKey(out, k, mergePatch(getKey(out, k), v));
  }
  return out;
}

export function jsonPatch(target: JsonObject, ops: Json): JsonObject {
  if (!Array.isArray(ops))
    throw badRequest('json: cannot unmarshal object into Go value of type jsonpatch.Patch');
  try {
    const doc = structuredClone(target);
    const res = fastJsonPatch.applyPatch(
      doc,
      ops as unknown as fastJsonPatch.Operation[],
      true,
      true,
    ).newDocument;
    if (!isJsonObject(res as Json)) throw new Error('the patch replaced the whole object');
    return res as JsonObject;
  } catch (err) {
    const msg = err instanceof Error ? err.message.split('\n')[0] : String(err);
    throw new ApiError(
      422,
      'Invalid',
      `the server rejected our request due to an error in our request: ${msg}`,
    );
  }
}

interface ListMeta {
  strategy: string;
  mergeKey: string | undefined;
}

function listMeta(field: Schema | undefined): ListMeta {
  const strategy =
    typeof field?.['x-kubernetes-patch-strategy'] === 'string' ? field['x-kubernetes-patch-strategy'] : '';
  const key = field?.['x-kubernetes-patch-merge-key'];
  return { strategy, mergeKey: typeof key === 'string' ? key : undefined };
}

const DIRECTIVE = '$patch';
const RETAIN = '$retainKeys';
const ORDER = '$setElementOrder/';
const DELETE_PRIMITIVE = '$deleteFromPrimitiveList/';

function stripDirectives(v: Json): Json {
  if (Array.isArray(v)) {
    return v
      .filter((e) => !(isJsonObject(e) && e[DIRECTIVE] !== undefined && Object.keys(e).length === 1))
      .map(stripDirectives);
  }
  if (!isJsonObject(v)) return v;
  const out: JsonObject = {};
  for (const [k, val] of Object.entries(v)) {
    if (k === DIRECTIVE || k === RETAIN || k.startsWith(ORDER) || k.startsWith(DELETE_PRIMITIVE)) continue;
    setKey(out, k, stripDirectives(val));
  }
  return out;
}

export class StrategicMerge {
  constructor(private readonly api: OpenApi) {}

  apply(original: JsonObject, patch: Json, schema: Schema): JsonObject {
    if (!isJsonObject(patch)) throw badRequest('strategic merge patch must be a JSON object');
    const out = this.mergeMap(original, patch, schema);
    if (out === undefined) throw badRequest('a strategic merge patch cannot delete the whole object');
    return out;
  }

  private mergeMap(orig: JsonObject, patch: JsonObject, schema: Schema | undefined): JsonObject | undefined {
    const directive = patch[DIRECTIVE];
    if (directive === 'delete') return undefined;
    if (directive === 'replace') return stripDirectives(patch) as JsonObject;
    if (directive !== undefined) throw badRequest(`Unknown patch type: ${JSON.stringify(directive)}`);
    const out: JsonObject = { ...orig };
    const orders: [string, Json[]][] = [];
    for (const [key, pv] of Object.entries(patch)) {
      if (key === RETAIN) continue;
      if (key.startsWith(ORDER)) {
        if (Array.isArray(pv)) orders.push([key.slice(ORDER.length), pv]);
        continue;
      }
      if (key.startsWith(DELETE_PRIMITIVE)) {
        const field = key.slice(DELETE_PRIMITIVE.length);
        const cur = out[field];
        if (Array.isArray(cur) && Array.isArray(pv)) {
          const drop = new Set(pv.map((x) => JSON.stringify(x)));
          out[field] = cur.filter((x) => !drop.has(JSON.stringify(x)));
        }
        continue;
      }
      if (pv === null) {
        delete out[key];
        continue;
      }
      const fieldSchema = this.api.property(schema, key);
      const ov = getKey(out, key);
      if (isJsonObject(pv)) {
        const merged = this.mergeMap(isJsonObject(ov) ? ov : {}, pv, fieldSchema);
        if (merged === undefined) delete out[key];
        else setKey(out, key, merged);
      } else if (Array.isArray(pv)) {
        const meta = listMeta(fieldSchema);
        setKey(
          out,
          key,
          meta.strategy.split(',').includes('merge')
            ? this.mergeList(Array.isArray(ov) ? ov : [], pv, this.api.items(fieldSchema), meta.mergeKey)
            : (stripDirectives(pv) as Json[]),
        );
      } else {
        setKey(out, key, pv);
      }
    }
    for (const [field, order] of orders) {
      const cur = out[field];
      if (Array.isArray(cur))
        out[field] = applyOrder(cur, order, listMeta(this.api.property(schema, field)).mergeKey);
    }
    const retain = patch[RETAIN];
    if (Array.isArray(retain)) {
      const keep = new Set(retain.filter((k): k is string => typeof k === 'string'));
      for (const k of Object.keys(out)) if (!keep.has(k)) delete out[k];
    }
    return out;
  }

  private mergeList(
    orig: Json[],
    patch: Json[],
    itemSchema: Schema | undefined,
    mergeKey: string | undefined,
  ): Json[] {
    if (patch.some((e) => isJsonObject(e) && e[DIRECTIVE] === 'replace')) {
      return stripDirectives(patch.filter((e) => !(isJsonObject(e) && e[DIRECTIVE] === 'replace'))) as Json[];
    }
    if (mergeKey === undefined) {
      const seen = new Set(orig.map((x) => JSON.stringify(x)));
      const out = [...orig];
      for (const e of patch) {
        const k = JSON.stringify(e);
        if (!seen.has(k)) {
          seen.add(k);
          out.push(e);
        }
      }
      return out;
    }
    const out = [...orig];
    for (const pe of patch) {
      if (!isJsonObject(pe))
        throw badRequest(`merging an object in json but data type is not map, is ${typeof pe}`);
      const id = pe[mergeKey];
      if (id === undefined)
        throw badRequest(`map: ${JSON.stringify(pe)} does not contain declared merge key: ${mergeKey}`);
      const idx = out.findIndex((e) => isJsonObject(e) && e[mergeKey] === id);
      if (pe[DIRECTIVE] === 'delete') {
        if (idx >= 0) out.splice(idx, 1);
        continue;
      }
      const base = idx >= 0 ? out[idx] : undefined;
      const merged = this.mergeMap(isJsonObject(base) ? base : {}, pe, itemSchema);
      if (merged === undefined) {
        if (idx >= 0) out.splice(idx, 1);
      } else if (idx >= 0) out[idx] = merged;
      else out.push(merged);
    }
    return out;
  }
}

/** `$setElementOrder`: listed elements take the given order; the others keep theirs, after them. */
function applyOrder(list: Json[], order: Json[], mergeKey: string | undefined): Json[] {
  const keyOf = (e: Json): string =>
    JSON.stringify(mergeKey !== undefined && isJsonObject(e) ? e[mergeKey] : e);
  const rank = new Map(order.map((e, i) => [keyOf(e), i]));
  const listed = list
    .filter((e) => rank.has(keyOf(e)))
    .sort((a, b) => rank.get(keyOf(a))! - rank.get(keyOf(b))!);
  return [...listed, ...list.filter((e) => !rank.has(keyOf(e)))];
}
