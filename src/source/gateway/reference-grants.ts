/**
 * ReferenceGrant checks: a reference from an object in one namespace to an object in another is
 * allowed only when a ReferenceGrant in the target namespace names the source (group, kind,
 * namespace) and the target (group, kind, and the name when it gives one). Pure.
 */
import type { ReferenceGrant } from '../../kube/gateway-objects.ts';

export interface RefFrom {
  group: string;
  kind: string;
  namespace: string;
}

export interface RefTo {
  group: string;
  kind: string;
  namespace: string;
  name: string;
}

export function referencePermitted(grants: readonly ReferenceGrant[], from: RefFrom, to: RefTo): boolean {
  if (from.namespace === to.namespace) return true;
  return grants.some(
    (g) =>
      g.metadata.namespace === to.namespace &&
      g.spec.from.some(
        (f) => f.group === from.group && f.kind === from.kind && f.namespace === from.namespace,
      ) &&
      g.spec.to.some(
        (t) =>
          t.group === to.group &&
          t.kind === to.kind &&
          (t.name === undefined || t.name === '' || t.name === to.name),
      ),
  );
}
