/**
 * The sandbox's API paths: /api/{version}/... (the core group) and /apis/{group}/{version}/...,
 * optionally under /namespaces/{namespace}/, to a resource type of the catalog, a name and a
 * subresource. Anything else is not a resource path (undefined). Pure.
 */
import type { TypeCatalog } from './catalog.ts';
import type { ResourceType } from './kinds.ts';

export interface Route {
  type: ResourceType;
  namespace: string | undefined;
  name: string | undefined;
  subresource: string | undefined;
}

export function parseResourcePath(types: TypeCatalog, segments: string[]): Route | undefined {
  let group = '';
  let version: string | undefined;
  let rest: string[];
  if (segments[0] === 'api') {
    version = segments[1];
    rest = segments.slice(2);
  } else if (segments[0] === 'apis') {
    group = segments[1] ?? '';
    version = segments[2];
    rest = segments.slice(3);
  } else return undefined;
  if (!version || rest.length === 0) return undefined;
  let namespace: string | undefined;
  // /namespaces/{name}/status is the Namespace's own subresource, not a collection in it.
  const namespaceSubresource = rest[0] === 'namespaces' && rest.length === 3 && rest[2] === 'status';
  if (rest[0] === 'namespaces' && rest.length >= 3 && !namespaceSubresource) {
    namespace = rest[1];
    rest = rest.slice(2);
  }
  const [plural, name, subresource, ...extra] = rest;
  if (!plural || extra.length > 0) return undefined;
  const type = types.find(group, version, plural);
  if (!type) return undefined;
  if (type.namespaced === false && namespace !== undefined) return undefined;
  return { type, namespace, name, subresource };
}
