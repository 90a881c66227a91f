/**
 * The simulated Data Plane API's runtime servers: a backend's servers as the real HAProxy's
 * `show servers state` has them (its checks), at v2 `runtime/servers?backend=B[/name]` and v3
 * `runtime/backends/B/servers[/name]`, as the API's `runtime_server` model names the fields. The
 * answer is read here with code of the simulator's own, from HAProxy's management guide (the
 * columns by their header names; srv_admin_state bits: 0x01 forced, 0x02 inherited and 0x20
 * resolution maintenance, 0x08 forced and 0x10 inherited drain; srv_op_state 0 stopped, 1
 * starting, 2 running, 3 stopping).
 */
import type { ApiVersion } from '../../adapters/haproxy/dataplane/models.ts';
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
  const list = runtimeServers(await device.serversState(backend)).filter((r) => r.backend_name === backend);
  if (name === undefined) return { status: 200, body: list };
  const one = list.find((r) => r.name === name);
  if (!one) throw new DpError(404, `server ${name} not found in backend ${backend}`);
  return { status: 200, body: one };
}

/** `show servers state` (format 1) as runtime_server objects; lines that are not rows are skipped. */
export function runtimeServers(text: string): Record<string, unknown>[] {
  const lines = text.split('\n');
  const header = lines.find((l) => l.startsWith('# be_id'));
  if (!header) return [];
  const names = header.replace(/^#\s*/, '').trim().split(/\s+/);
  const out: Record<string, unknown>[] = [];
  for (const line of lines) {
    if (!/^\d+ /.test(line)) continue;
    const words = line.trim().split(/\s+/);
    const col = (name: string): string => words[names.indexOf(name)] ?? '';
    const num = (name: string): number => Number(col(name));
    const admin = num('srv_admin_state');
    const op = num('srv_op_state');
    out.push({
      id: col('srv_name'),
      name: col('srv_name'),
      address: col('srv_addr'),
      port: num('srv_port'),
      admin_state: admin & (0x01 | 0x02 | 0x20) ? 'maint' : admin & (0x08 | 0x10) ? 'drain' : 'ready',
      operational_state: op === 0 ? 'down' : op === 3 ? 'stopping' : 'up',
      backend_name: col('be_name'),
      check_state: num('srv_check_state'),
      check_status: num('srv_check_status'),
      iweight: num('srv_uweight'),
    });
  }
  return out;
}
