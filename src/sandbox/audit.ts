/**
 * What the sandbox's audit hook reports for each resource request: the user its bearer token
 * stands for and the request's RBAC attributes (verb, group, resource with subresource,
 * namespace, name), as the API server's authorizer sees them.
 */
/** One request as RBAC sees it. */
export interface AuditEntry {
  user: string;
  verb: string;
  apiGroup: string;
  /** The resource, with its subresource (pods/status). */
  resource: string;
  namespace: string;
  name: string;
}

export const verbOf = (method: string, named: boolean, q: URLSearchParams): string => {
  if (method === 'GET')
    return named ? 'get' : q.get('watch') === 'true' || q.get('watch') === '1' ? 'watch' : 'list';
  if (method === 'DELETE') return named ? 'delete' : 'deletecollection';
  return (
    ({ POST: 'create', PUT: 'update', PATCH: 'patch' } as Record<string, string>)[method] ??
    method.toLowerCase()
  );
};
