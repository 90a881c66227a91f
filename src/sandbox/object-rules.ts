/**
 * Small shared rules of the sandbox's objects: the time an API server stamps (RFC 3339, whole
 * seconds), an object without its metadata and status (what a generation counts), and whether two
 * differ only in their managedFields times (what kube-apiserver does not write).
 */
import { isDeepStrictEqual } from 'node:util';
import type { JsonObject } from './openapi.ts';
import { metadataOf } from './store.ts';

export function now(): string {
  return new Date().toISOString().replace(/\.\d{3}Z$/, 'Z');
}

export function withoutMetaAndStatus(o: JsonObject): JsonObject {
  const { metadata, status, ...rest } = o;
  void metadata;
  void status;
  return rest;
}

/** Whether two objects differ only in their managedFields entries' times. */
export function sameButManagedTimes(a: JsonObject, b: JsonObject): boolean {
  const untimed = (o: JsonObject): JsonObject => {
    const c = { ...o, metadata: { ...metadataOf(o) } };
    const managed = metadataOf(c).managedFields;
    if (Array.isArray(managed))
      metadataOf(c).managedFields = managed.map((m) =>
        typeof m === 'object' && m !== null && !Array.isArray(m) ? { ...m, time: '' } : m,
      );
    return c;
  };
  return isDeepStrictEqual(untimed(a), untimed(b));
}
