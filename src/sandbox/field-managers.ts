/**
 * Field ownership for the registry's writes: server-side apply (an `application/apply-patch+yaml`
 * PATCH) through apply.ts, and an `Update` entry for every other write, owning what it changed.
 * A writer is named by the request's `fieldManager`, else by its User-Agent's program
 * (`kubectl-create`, `helm`), as the API server does.
 */
import type { IncomingMessage } from 'node:http';
import { ServerSideApply } from './apply.ts';
import { apiVersionOf, type ResourceType } from './kinds.ts';
import type { Json, JsonObject, OpenApi } from './openapi.ts';
import type { RegistryWrites, WriteOptions } from './registry-options.ts';
import { now } from './object-rules.ts';
import { badRequest } from './status.ts';
import { metadataOf, type StoredObject } from './store.ts';

/** The writer of a request: `fieldManager`, else the User-Agent's program name. */
export function fieldManagerOf(q: URLSearchParams, req: IncomingMessage): string | undefined {
  const asked = q.get('fieldManager');
  if (asked !== null) {
    if (asked.length > 128) throw badRequest('fieldManager: Too long: may not be more than 128 bytes');
    return asked;
  }
  const agent = (req.headers['user-agent'] ?? '').split('/')[0]!.trim();
  return agent || undefined;
}

export class FieldManagers {
  private readonly ssa: ServerSideApply;

  constructor(private readonly openapi: OpenApi) {
    this.ssa = new ServerSideApply(openapi);
  }

  private schema(t: ResourceType) {
    return t.custom ? undefined : this.openapi.definition(t.definition);
  }

  /** Sets `after`'s managed fields: what an apply computed, or the writer's `Update` entry. */
  manage(t: ResourceType, before: JsonObject | undefined, after: JsonObject, opts: WriteOptions): void {
    const meta = metadataOf(after);
    if (opts.managed !== undefined) {
      meta.managedFields = opts.managed;
      return;
    }
    if (!opts.fieldManager) {
      const kept = before && metadataOf(before).managedFields;
      if (kept) meta.managedFields = kept;
      return;
    }
    this.ssa.recordUpdate({
      before,
      after,
      manager: opts.fieldManager,
      schema: this.schema(t),
      apiVersion: apiVersionOf(t),
      now: now(),
    });
  }

  /** A server-side apply: the object created, or the live one merged with the configuration. */
  apply(
    registry: RegistryWrites,
    t: ResourceType,
    namespace: string,
    name: string,
    body: Json,
    opts: WriteOptions,
    force: boolean,
  ): StoredObject {
    if (!opts.fieldManager)
      throw badRequest(
        'PatchOptions.meta.k8s.io "" is invalid: fieldManager: Required value: is required for apply patch',
      );
    if (typeof body !== 'object' || body === null || Array.isArray(body))
      throw badRequest('apply patch must be a YAML or JSON object');
    const applied = body as JsonObject;
    if (applied.apiVersion !== apiVersionOf(t) || applied.kind !== t.kind)
      throw badRequest(
        `the apply configuration is ${String(applied.apiVersion)}/${String(applied.kind)}, not ${apiVersionOf(t)}/${t.kind}`,
      );
    const meta = (applied.metadata ?? {}) as JsonObject;
    if (meta.name !== undefined && meta.name !== name)
      throw badRequest(
        `the name of the object (${String(meta.name)}) does not match the name on the URL (${name})`,
      );
    const live = registry.find(t, namespace, name);
    const next = this.ssa.apply({
      // Read, never written: the apply builds its result apart (and clones what it keeps).
      live: live && registry.view(t, live.obj),
      applied: { ...applied, metadata: { ...meta, name, ...(t.namespaced ? { namespace } : {}) } },
      manager: opts.fieldManager,
      force,
      schema: this.schema(t),
      apiVersion: apiVersionOf(t),
      now: now(),
      kind: t.kind,
      name,
    });
    if (next === 'unchanged') return live!;
    const managed = metadataOf(next).managedFields as Json;
    const withManaged = { ...opts, managed };
    if (!live) {
      delete metadataOf(next).resourceVersion;
      return registry.create(t, namespace, next, withManaged);
    }
    return registry.update(t, namespace, name, next, undefined, withManaged);
  }
}
