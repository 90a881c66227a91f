/**
 * The simulated Data Plane API's runtime servers: a backend's servers as the real HAProxy's
 * `show servers state` has them (its checks), at v2 `runtime/servers?backend=B[/name]` and v3
 * `runtime/backends/B/servers[/name]`.
 */
import type { ApiVersion } from '../dataplane/models.ts';
import { parseServersState, runtimeServer } from '../server-state.ts';
import { DpError } from './config-crud.ts';

export async function runtimeServersRoute(
  v: ApiVersion,
  seg: string[],
  query: Record<string, string>,
  device: { hasBackend(name: string): boolean; serversState(backend: string): Promise<string> },
): Promise<{ status: number; body: unknown }> {
  let backend: string | undefined;
  let name: string | undefined;
  if (v === 'v3' && seg[0] === 'backends' && seg[2] === 'servers' && seg.length <= 4) {
    backend = seg[1];
    name = seg[3];
  } else if (v === 'v2' && seg[0] === 'servers' && seg.length <= 2) {
    backend = query.backend;
    name = seg[1];
  } else throw new DpError(404, `runtime/${seg.join('/')}: not found in this simulator`);
  if (!backend) throw new DpError(400, 'backend is required');
  if (!device.hasBackend(backend)) throw new DpError(404, `backend ${backend} not found`);
  const list = parseServersState(await device.serversState(backend))
    .filter((r) => r.backend === backend)
    .map(runtimeServer);
  if (name === undefined) return { status: 200, body: list };
  const one = list.find((r) => r.name === name);
  if (!one) throw new DpError(404, `server ${name} not found in backend ${backend}`);
  return { status: 200, body: one };
}
