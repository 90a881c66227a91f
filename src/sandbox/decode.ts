/**
 * A request body decoded into the stored shape, as the API server's decoder does: apiVersion and
 * kind checked, fields the type lacks pruned (reported under `fieldValidation`), events.k8s.io
 * events turned into the core shape they are stored in.
 */
import type { CustomKinds } from './crd/custom-kinds.ts';
import { eventsV1ToCore } from './event-versions.ts';
import { apiVersionOf, type ResourceType } from './kinds.ts';
import type { Json, JsonObject, OpenApi } from './openapi.ts';
import { pruneToSchema } from './prune.ts';
import type { WriteOptions } from './registry-options.ts';
import { badRequest } from './status.ts';
import { isJsonObject } from './json.ts';

/** Decodes a request body into the stored shape: kind checks, pruning, events conversion. */
export function decodeObject(
  openapi: OpenApi,
  custom: CustomKinds,
  t: ResourceType,
  body: Json,
  opts: WriteOptions,
): JsonObject {
  if (!isJsonObject(body))
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
  const schema = t.custom ? undefined : openapi.definition(t.definition);
  let obj = body;
  if (t.custom) {
    reportUnknown(custom.prune(t, obj), opts);
  } else if (schema) {
    const { value, unknown } = pruneToSchema(
      openapi,
      body,
      schema,
      `${t.kind} in version "${t.version}" cannot be handled as a ${t.kind}`,
    );
    reportUnknown(unknown, opts);
    obj = value;
  }
  obj.apiVersion = apiVersionOf(t);
  obj.kind = t.kind;
  obj.metadata = isJsonObject(obj.metadata) ? obj.metadata : {};
  return t.group === 'events.k8s.io' ? eventsV1ToCore(obj) : obj;
}

function reportUnknown(unknown: string[], opts: WriteOptions): void {
  if (unknown.length > 0 && opts.fieldValidation === 'Strict') {
    throw badRequest(`strict decoding error: ${unknown.map((u) => `unknown field "${u}"`).join(', ')}`);
  }
  if (opts.fieldValidation === 'Warn') opts.warnings.push(...unknown.map((u) => `unknown field "${u}"`));
}
