/**
 * What migrating another controller's custom resources gives: the npl-lb objects that do the same
 * (BackendPolicies, and Ingresses that route as its virtual servers did), each
 * checked by the controller's own validation boundary before it is printed, and a note for every
 * field that has no equivalent, changed on the way, or needs a hand. Printed as a manifest for
 * `kubectl apply -f`, the notes as comments. Pure.
 */
import { stringify } from 'yaml';
import { z } from 'zod';
import type { backendPolicySpecSchema } from '../kube/policy-objects.ts';
import { POLICY_GROUP } from '../kube/policy-objects.ts';
import { checkPolicySpec } from '../source/backend-policies.ts';

/** The controller's own checks of a host and a path, for the Ingresses a migration prints. */
export { hostProblem, pathProblem } from '../source/validate.ts';
/** The Ingress's re-encryption annotations, for the notes and Ingresses a migration prints. */
export {
  BACKEND_CA_ANNOTATION,
  BACKEND_PROTOCOL_ANNOTATION,
  BACKEND_SERVER_NAME_ANNOTATION,
} from '../kube/annotations.ts';
import { commentLine, type MigrationNote } from './result.ts';

export interface ObjectsMigration {
  objects: Record<string, unknown>[];
  notes: MigrationNote[];
}

/** A custom resource as the migration reads it: kind, name and namespace, the rest unknown. */
export const sourceObjectSchema = z.looseObject({
  apiVersion: z.string().catch(''),
  kind: z.string().catch(''),
  metadata: z
    .looseObject({ name: z.string().catch(''), namespace: z.string().catch('default') })
    .catch({ name: '', namespace: 'default' }),
  spec: z.record(z.string(), z.unknown()).catch({}),
});
export type SourceObject = z.infer<typeof sourceObjectSchema>;

export const objectName = (o: SourceObject): string => `${o.kind} ${o.metadata.namespace}/${o.metadata.name}`;

/** A note when the object's name or namespace is not one Kubernetes takes (it is then left out). */
export function badIdentity(o: SourceObject): MigrationNote | undefined {
  const { name, namespace } = o.metadata;
  if (SERVICE_NAME.test(namespace) && OBJECT_NAME.test(name)) return undefined;
  return {
    from: `${o.kind} ${JSON.stringify(`${namespace}/${name}`.slice(0, 120))}`,
    kind: 'by hand',
    why: 'not a Kubernetes namespace and name: left out',
  };
}

/** Each object whose name and namespace Kubernetes takes; the others are noted and left out. */
export function* wellNamed(objects: readonly SourceObject[], out: ObjectsMigration): Generator<SourceObject> {
  for (const o of objects) {
    const bad = badIdentity(o);
    if (bad) out.notes.push(bad);
    else yield o;
  }
}

/** A Kubernetes object name (a DNS subdomain of at most 253 characters) made from parts. */
export function nameOf(...parts: string[]): string {
  const n = parts
    .join('-')
    .toLowerCase()
    .replace(/[^a-z0-9.-]+/g, '-')
    .replace(/^[-.]+|[-.]+$/g, '')
    .slice(0, 253)
    .replace(/[-.]+$/, '');
  return n || 'migrated';
}

/** An object's name (a ConfigMap's, a Secret's, a custom resource's): a DNS-1123 subdomain. */
export const OBJECT_NAME = /^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$/;

/** A Service's (or namespace's) name: a DNS-1123 label. */
export const SERVICE_NAME = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;

/** The part of a BackendPolicy's spec a source object gives, before its target is known. */
export type PolicySettings = Omit<z.input<typeof backendPolicySpecSchema>, 'targetRefs'>;

export interface TargetService {
  namespace: string;
  service: string;
  /** The Service port's name, when the source names the port by name. */
  port?: string;
}

/**
 * Collects BackendPolicies: one per target (a Service, or one port of it), as the controller takes
 * one. A second source asking the same target other settings is noted and left out, as the
 * controller would leave the younger policy out (Conflicted).
 */
export class PolicyCollector {
  private readonly byTarget = new Map<
    string,
    { from: string; settings: string; object: Record<string, unknown> }
  >();

  constructor(private readonly out: ObjectsMigration) {}

  add(from: string, name: string, target: TargetService, settings: PolicySettings): void {
    if (Object.keys(settings).length === 0) return;
    if (!SERVICE_NAME.test(target.service) || !SERVICE_NAME.test(target.namespace)) {
      this.out.notes.push({
        from,
        kind: 'by hand',
        why: `${JSON.stringify(`${target.namespace}/${target.service}`.slice(0, 120))} is not a Service's namespace and name; write the BackendPolicy by hand`,
      });
      return;
    }
    const ref = {
      group: '' as const,
      kind: 'Service' as const,
      name: target.service,
      ...(target.port ? { sectionName: target.port } : {}),
    };
    const spec = { targetRefs: [ref], ...settings };
    const checked = checkPolicySpec(spec);
    if ('problem' in checked) {
      this.out.notes.push({
        from,
        kind: 'by hand',
        why: `the BackendPolicy it gives would be refused (${checked.problem}); write it by hand`,
      });
      return;
    }
    const key = `${target.namespace}/${target.service}/${target.port ?? ''}`;
    const text = JSON.stringify(settings);
    const seen = this.byTarget.get(key);
    if (seen) {
      if (seen.settings !== text)
        this.out.notes.push({
          from,
          kind: 'changed',
          why: `Service ${target.namespace}/${target.service}${target.port ? ` port ${target.port}` : ''} already has the policy from ${seen.from}; a Service's pools take one policy, so these settings are left out`,
        });
      return;
    }
    const object = {
      apiVersion: `${POLICY_GROUP}/v1alpha1`,
      kind: 'BackendPolicy',
      metadata: { name: nameOf(name), namespace: target.namespace },
      spec,
    };
    this.byTarget.set(key, { from, settings: text, object });
    this.out.objects.push(object);
  }
}

/** The manifest: a header naming the source, the objects, then the notes as comments. */
export function renderObjects(m: ObjectsMigration, source: string): string {
  const lines = [
    `# npl-lb objects migrated from ${source}`,
    '# Review the notes at the end, then: kubectl apply -f <this file>',
  ];
  for (const o of m.objects)
    lines.push('---', stringify(o, { lineWidth: 0, aliasDuplicateObjects: false }).trimEnd());
  if (m.objects.length === 0) lines.push('# (no object: see the notes)');
  if (m.notes.length > 0) {
    lines.push('', '# Not carried over as it was:');
    for (const n of m.notes) lines.push(commentLine(`#   ${n.from} (${n.kind}): ${n.why}`));
  } else lines.push('', '# Every field was carried over.');
  return `${lines.join('\n')}\n`;
}

/** A number in [min, max], or undefined when the value is not a number. */
export function clampInt(v: unknown, min: number, max: number): number | undefined {
  const n = typeof v === 'string' ? Number(v) : v;
  if (typeof n !== 'number' || !Number.isFinite(n)) return undefined;
  return Math.min(max, Math.max(min, Math.round(n)));
}
