/**
 * A pool's runtime server status (GET /api/pool/{uuid}/runtime/server) read as member health.
 * Pure. (The simulator answers it with code of its own: sim/avi/runtime-servers.ts.)
 */
import { z } from 'zod';
import type { MemberHealth } from '../../src/adapter/contract.ts';

/** What the answer holds, as far as we read it. */
const runtimeServersSchema = z.array(
  z.looseObject({
    server_ip: z.looseObject({ addr: z.string() }),
    port: z.number().int(),
    oper_status: z.looseObject({ state: z.string(), reason: z.array(z.string()).optional() }),
  }),
);

/** The pool's servers as member health, or why the answer could not be read. */
export function readRuntimeServers(pool: string, body: unknown): MemberHealth[] | { error: string } {
  const parsed = runtimeServersSchema.safeParse(body);
  if (!parsed.success) return { error: `pool ${pool} runtime: ${parsed.error.issues[0]?.message}` };
  return parsed.data.map((s): MemberHealth => {
    const state = s.oper_status.state;
    return {
      pool,
      address: s.server_ip.addr,
      port: s.port,
      admin: state === 'OPER_DISABLED' ? 'draining' : 'enabled',
      // A disabled server is not monitored: its health is unknown, not down.
      health: state === 'OPER_UP' ? 'up' : state === 'OPER_DOWN' ? 'down' : 'unknown',
      ...(s.oper_status.reason?.length ? { reason: s.oper_status.reason.join('; ') } : {}),
    };
  });
}
