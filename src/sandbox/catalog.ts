/**
 * The kinds one sandbox serves: the built-in ones, and those its CustomResourceDefinitions add and
 * take away while it runs. Discovery, routing, OpenAPI and namespace clean-up all read it.
 */
import { apiVersionOf, RESOURCE_TYPES, type ResourceType } from './kinds.ts';

export class TypeCatalog {
  /** Custom kinds by the name of the CRD that defines them (one entry per served version). */
  private readonly custom = new Map<string, ResourceType[]>();
  private cache: readonly ResourceType[] | undefined;

  all(): readonly ResourceType[] {
    this.cache ??= [...RESOURCE_TYPES, ...[...this.custom.values()].flat()];
    return this.cache;
  }

  find(group: string, version: string, plural: string): ResourceType | undefined {
    return this.all().find((t) => t.group === group && t.version === version && t.plural === plural);
  }

  /** The kinds a CRD defines now (empty when it defines none). */
  customOf(crdName: string): readonly ResourceType[] {
    return this.custom.get(crdName) ?? [];
  }

  setCustom(crdName: string, types: ResourceType[]): void {
    if (types.length === 0) this.custom.delete(crdName);
    else this.custom.set(crdName, types);
    this.cache = undefined;
  }

  groupVersions(): { group: string; version: string }[] {
    const seen = new Map<string, { group: string; version: string }>();
    for (const t of this.all()) seen.set(apiVersionOf(t), { group: t.group, version: t.version });
    return [...seen.values()];
  }

  /** Whether a built-in kind already uses this group and plural (a CRD may not take it). */
  isBuiltIn(group: string, plural: string): boolean {
    return RESOURCE_TYPES.some((t) => t.group === group && t.plural === plural);
  }
}
