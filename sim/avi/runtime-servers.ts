/**
 * The simulated Avi Controller's answer to GET /api/pool/{uuid}/runtime/server: each server of the
 * stored pool with its operational state (OPER_UP, OPER_DOWN, OPER_UNAVAIL from the simulator's
 * monitor; OPER_DISABLED for a disabled server), as Avi's API guide shows it. Pure.
 */
import type { ProbeResult } from '../../src/runtime/member-prober.ts';

type Json = Record<string, unknown>;

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
