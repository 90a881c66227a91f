/**
 * What the registry does for CRDs and their objects: the catalog of served kinds kept in step with
 * the stored CRDs (their objects removed with them), a CRD checked and given its status, and a
 * custom object pruned, defaulted and validated against its version's schema and CEL rules.
 */
import type { Logger } from '../../runtime/logger.ts';
import { TypeCatalog } from '../catalog.ts';
import { type ResourceType, storageKey } from '../kinds.ts';
import type { JsonObject } from '../openapi.ts';
import type { StatusCause } from '../status.ts';
import { metadataOf, type Store } from '../store.ts';
import { validateMetadata } from '../validate.ts';
import { skippedRules, validateRules } from './cel-rules.ts';
import { crdStatus, typesOf, validateCrd } from './definition.ts';
import { applyDefaults, prune, TYPE_INVALID, validate } from './structural.ts';

export const isCrd = (t: ResourceType): boolean =>
  t.group === 'apiextensions.k8s.io' && t.kind === 'CustomResourceDefinition';

const RULES_NOT_CHECKED: StatusCause = {
  reason: 'FieldValueInvalid',
  message:
    'Invalid value: "": some validation rules were not checked because the object was invalid; correct the existing errors to complete validation',
  field: '<nil>',
};

export class CustomKinds {
  /** The kinds served now: built-in ones and those of the stored CRDs. */
  readonly types = new TypeCatalog();
  /** CEL rules already reported as skipped (each is logged once). */
  private readonly reportedRules = new Set<string>();

  constructor(
    private readonly store: Store,
    private readonly log: Logger,
  ) {}

  /** Prunes a custom object in place; returns the unknown fields it dropped. */
  prune(t: ResourceType, obj: JsonObject): string[] {
    return prune(obj, t.custom?.schema);
  }

  /** Defaults, then the causes of a 422: metadata, the schema, then (unless a type is wrong) the CEL rules. */
  check(t: ResourceType, obj: JsonObject, old: JsonObject | undefined): StatusCause[] {
    const schema = t.custom?.schema;
    applyDefaults(obj, schema);
    const causes = validateMetadata(t, obj);
    if (!schema) return causes;
    const structural = validate(obj, schema, '');
    if (structural.some((c) => c.reason === TYPE_INVALID))
      return [...causes, ...structural, RULES_NOT_CHECKED];
    return [...causes, ...structural, ...validateRules(obj, old, schema)];
  }

  /** A CRD's causes of a 422; when there are none its status is set (names accepted, established). */
  checkCrd(crd: JsonObject, now: string): StatusCause[] {
    const causes = validateCrd(crd, (g, p) => this.types.isBuiltIn(g, p));
    if (causes.length === 0) crd.status = crdStatus(crd, now);
    return causes;
  }

  /** Serves the kinds of a stored CRD; its rules the CEL evaluator cannot run are logged once. */
  serve(crd: JsonObject): void {
    const name = String(metadataOf(crd).name);
    const types = typesOf(crd);
    this.types.setCustom(name, types);
    for (const t of types) {
      for (const r of skippedRules(t.custom?.schema)) {
        if (this.reportedRules.has(r.rule)) continue;
        this.reportedRules.add(r.rule);
        this.log.warn(
          { crd: name, version: t.version, rule: r.rule, reason: r.reason },
          'CEL rule skipped: the evaluator cannot run it',
        );
      }
    }
  }

  /** A CRD going takes its objects with it (the apiextensions finalizer's clean-up), then stops serving them. */
  withdraw(crd: JsonObject): void {
    const crdName = String(metadataOf(crd).name);
    const first = this.types.customOf(crdName)[0];
    if (first) {
      for (const s of this.store.list(storageKey(first), undefined)) {
        this.store.commit(storageKey(first), 'DELETED', structuredClone(s.obj));
      }
    }
    this.types.setCustom(crdName, []);
  }
}
