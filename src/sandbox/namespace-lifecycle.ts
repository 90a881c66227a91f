/**
 * What the namespace controller does for a real API server: no new content in a terminating
 * namespace, everything in it deleted when it is deleted, and the namespace itself gone once empty.
 */
import { RESOURCE_TYPES, type ResourceType, storageKey } from './kinds.ts';
import type { DeleteOptions, RegistryDeletes } from './registry-options.ts';
import { ApiError, notFound } from './status.ts';
import { metadataOf, type Store } from './store.ts';

export const NAMESPACES = RESOURCE_TYPES.find((t) => t.kind === 'Namespace')!;
const NS_STORAGE = storageKey(NAMESPACES);

export function requireLiveNamespace(store: Store, namespace: string): void {
  const ns = store.get(NS_STORAGE, '', namespace);
  if (!ns) throw notFound(NAMESPACES, namespace);
  if (metadataOf(ns.obj).deletionTimestamp) {
    throw new ApiError(
      403,
      'Forbidden',
      `unable to create new content in namespace ${namespace} because it is being terminated`,
    );
  }
}

/** Deletes everything in a terminating namespace, then the namespace. */
export function emptyNamespace(registry: RegistryDeletes, namespace: string): void {
  const seen = new Set<string>();
  const opts: DeleteOptions = { dryRun: false };
  const types = registry.types.all();
  for (const t of types) {
    if (!t.namespaced || seen.has(storageKey(t))) continue;
    seen.add(storageKey(t));
    for (const s of registry.store.list(storageKey(t), namespace)) {
      registry.delete(t, namespace, String(metadataOf(s.obj).name), opts);
    }
  }
  finalizeNamespaceIfEmpty(registry.store, namespace, types);
}

export function finalizeNamespaceIfEmpty(
  store: Store,
  namespace: string,
  types: readonly ResourceType[],
): void {
  const ns = store.get(NS_STORAGE, '', namespace);
  if (!ns || !metadataOf(ns.obj).deletionTimestamp) return;
  const keys = new Set(types.filter((t) => t.namespaced).map(storageKey));
  for (const k of keys) if (store.list(k, namespace).length > 0) return;
  store.commit(NS_STORAGE, 'DELETED', structuredClone(ns.obj));
}
