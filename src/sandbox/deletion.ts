/**
 * What a delete reads before it goes (registry.ts): its preconditions, which the API server
 * answers with a 409 naming the UID or resourceVersion, and an object marked for deletion
 * (`deletionTimestamp`, `deletionGracePeriodSeconds`) while a kubelet or a finalizer still has it.
 * Pure.
 */
import type { JsonObject } from './json.ts';
import type { ResourceType } from './kinds.ts';
import type { DeleteOptions } from './registry-options.ts';
import { conflict } from './status.ts';
import { metadataOf } from './store.ts';

/** Throws the API server's 409 when a precondition does not hold for the object's metadata. */
export function checkPreconditions(
  t: ResourceType,
  name: string,
  meta: JsonObject,
  pre: DeleteOptions['preconditions'],
): void {
  if (pre?.uid && pre.uid !== meta.uid)
    throw conflict(
      t,
      name,
      `Precondition failed: UID in precondition: ${pre.uid}, UID in object meta: ${String(meta.uid)}`,
    );
  if (pre?.resourceVersion && pre.resourceVersion !== meta.resourceVersion)
    throw conflict(
      t,
      name,
      `Precondition failed: ResourceVersion in precondition: ${pre.resourceVersion}, ResourceVersion in object meta: ${String(meta.resourceVersion)}`,
    );
}

/** A copy of the object marked for deletion at `at` (RFC 3339, seconds) with this grace period. */
export function markedForDeletion(obj: JsonObject, at: string, graceSeconds: number): JsonObject {
  const next = structuredClone(obj);
  const nm = metadataOf(next);
  nm.deletionTimestamp = at;
  nm.deletionGracePeriodSeconds = graceSeconds;
  return next;
}
