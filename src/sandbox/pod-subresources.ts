/**
 * The Pod subresources kubectl reaches through the API server to a kubelet: `log` answers the
 * container's output, which for a sandbox Pod (no process runs) is an empty log, after the API
 * server's own checks (the Pod exists; `container` names one of its containers, or it has one);
 * `exec`, `attach` and `portforward` need a kubelet's streaming endpoint, which the sandbox does
 * not run: refused with the API server's error for a kubelet it cannot reach.
 */
import type { ServerResponse } from 'node:http';
import type { ResourceType } from './kinds.ts';
import type { JsonObject } from './openapi.ts';
import type { Registry } from './registry.ts';
import { ApiError, badRequest, methodNotAllowed } from './status.ts';

const STREAMING = new Set(['exec', 'attach', 'portforward']);

export const isPodSubresource = (t: ResourceType, sub: string | undefined): boolean =>
  t.kind === 'Pod' &&
  t.group === '' &&
  !t.custom &&
  sub !== undefined &&
  (sub === 'log' || STREAMING.has(sub));

const obj = (v: unknown): JsonObject =>
  typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as JsonObject) : {};

export function servePodSubresource(
  registry: Registry,
  t: ResourceType,
  ns: string,
  name: string,
  sub: string,
  method: string,
  q: URLSearchParams,
  res: ServerResponse,
): void {
  const pod = registry.get(t, ns, name).obj;
  const spec = obj(pod.spec);
  const containers = (Array.isArray(spec.containers) ? spec.containers : []).map((c) => String(obj(c).name));
  if (sub === 'log') {
    if (method !== 'GET') throw methodNotAllowed();
    const asked = q.get('container');
    if (asked === null && containers.length > 1)
      throw badRequest(
        `a container name must be specified for pod ${name}, choose one of: [${containers.join(' ')}]`,
      );
    if (asked !== null && !containers.includes(asked))
      throw badRequest(`container ${asked} is not valid for pod ${name}`);
    res.writeHead(200, { 'Content-Type': 'text/plain' });
    res.end('');
    return;
  }
  const node = spec.nodeName;
  if (typeof node !== 'string' || node === '') throw badRequest(`pod ${name} does not have a host assigned`);
  throw new ApiError(
    500,
    'InternalError',
    `error dialing backend: the sandbox runs no kubelet on node ${node} (no ${sub} into its Pods)`,
  );
}
