/**
 * A pool's runtime server status (GET /api/pool/{uuid}/runtime/server), both ways: read as member
 * health by the adapter, and answered by the simulator from its health monitor. Pure.
 */
import { z } from 'zod';
import type { MemberHealth } from '../../src/adapter/contract.ts';
import type { ProbeResult } from '../sim-health.ts';

type Json = Record<string, unknown>;

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

/** The servers of a stored pool, as the simulator's monitor probes them. */
export function poolServerTargets(pool: Json): { address: string; port: number; server: Json }[] {
  return ((pool.servers ?? []) as Json[]).map((s) => ({
    address: String((s.ip as Json | undefined)?.addr ?? ''),
    port: Number(s.port ?? pool.default_server_port ?? 80),
    server: s,
  }));
}

/** The answer for those servers with the monitor's results (OPER_DISABLED when disabled). */
export function runtimeServersAnswer(
  targets: ReturnType<typeof poolServerTargets>,
  probed: ProbeResult[],
): Json[] {
  return targets.map(({ address, port, server }, i) => {
    const p = probed[i]!;
    const state =
      server.enabled === false
        ? 'OPER_DISABLED'
        : ({ up: 'OPER_UP', down: 'OPER_DOWN', unknown: 'OPER_UNAVAIL' } as const)[p.health];
    return {
      server_ip: { addr: address, type: address.includes(':') ? 'V6' : 'V4' },
      port,
      hostname: server.hostname ?? address,
      oper_status: {
        state,
        reason: [p.reason],
        last_changed_time: { secs: Math.floor(p.at / 1000), usecs: 0 },
      },
    };
  });
}
