/**
 * How a write or a delete to the sandbox's registry is asked (registry.ts): query parameters and
 * body options of the API, as decode.ts, field-managers.ts and namespace-lifecycle.ts pass them.
 */
import type { TypeCatalog } from './catalog.ts';
import type { Json, JsonObject } from './json.ts';
import type { ResourceType } from './kinds.ts';
import type { Store, StoredObject } from './store.ts';

export type FieldValidation = 'Strict' | 'Warn' | 'Ignore';
export type PatchType = 'json' | 'merge' | 'strategic' | 'apply';

export interface WriteOptions {
  dryRun: boolean;
  fieldValidation: FieldValidation;
  /** Warnings for the `Warning` response header (unknown fields under Warn). */
  warnings: string[];
  /** The writer (field-managers.ts), and the managed fields a server-side apply computed. */
  fieldManager?: string | undefined;
  managed?: Json;
  /** When the write began (its body read), ms since the epoch: the `Npl-Write-Started` header. */
  started?: number;
}

export interface DeleteOptions {
  dryRun: boolean;
  preconditions?: { uid?: string; resourceVersion?: string };
  /** DeleteOptions.gracePeriodSeconds: for a Pod a kubelet runs, how long it may take to stop. */
  gracePeriodSeconds?: number;
}

/** What of the registry a server-side apply (field-managers.ts) reads and writes through. */
export interface RegistryWrites {
  find(t: ResourceType, namespace: string, name: string): StoredObject | undefined;
  view(t: ResourceType, obj: JsonObject): JsonObject;
  create(t: ResourceType, namespace: string, body: Json, opts: WriteOptions): StoredObject;
  update(
    t: ResourceType,
    namespace: string,
    name: string,
    body: Json,
    subresource: 'status' | undefined,
    opts: WriteOptions,
  ): StoredObject;
}

/** What of the registry emptying a terminating namespace (namespace-lifecycle.ts) uses. */
export interface RegistryDeletes {
  readonly store: Store;
  readonly types: TypeCatalog;
  delete(t: ResourceType, namespace: string, name: string, opts: DeleteOptions): StoredObject;
}
