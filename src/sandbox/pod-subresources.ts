/**
 * The Pod subresources kubectl reaches through the API server to a kubelet: `log` answers the
 * container's output (what its process wrote, where the sandbox's kubelet runs one; an empty log
 * for a simulated Pod), after the API server's own checks (the Pod exists; `container` names one
 * of its containers, or it has one), with `sinceTime`, `sinceSeconds`, `tailLines` and
 * `timestamps` as the kubelet reads them;
 * `exec`, `attach` and `portforward` need a kubelet's streaming endpoint, which the sandbox does
 * not run: refused with the API server's error for a kubelet it cannot reach.
 */
import type { ServerResponse } from 'node:http';
import type { ResourceType } from './kinds.ts';
import type { JsonObject } from './openapi.ts';
import type { Registry } from './registry.ts';
import { type LogLine, logText } from './pod-logs.ts';
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

/** The API server's way to a Pod: the registry, and its kubelet's record of what containers wrote. */
export interface PodAccess {
  registry: Registry;
  logs: (uid: string, container: string | undefined) => LogLine[] | undefined;
}

export function servePodSubresource(
  access: PodAccess,
  t: ResourceType,
  ns: string,
  name: string,
  sub: string,
  method: string,
  q: URLSearchParams,
  res: ServerResponse,
): void {
  const pod = access.registry.get(t, ns, name).obj;
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
    const uid = String(obj(pod.metadata).uid ?? '');
    const lines = access.logs(uid, asked ?? undefined) ?? [];
    const text = logText(lines, q);
    res.writeHead(200, { 'Content-Type': 'text/plain' });
    res.end(text);
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
