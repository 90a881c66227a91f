/**
 * The operations of Mixed mode's loop (tls-loop.ts) in a Data Plane transaction
 * (transaction-plan.ts): its backend written with the backends, its frontend after the port's,
 * both deleted once the port stops being Mixed; a stray loop (its port deleted by hand) taken over;
 * and a frontend's binds as wanted, the port's and the loop's alike.
 */
import type { BuildContext, Ops } from './transaction-plan.ts';
import type { DpBind } from './models.ts';
import { loopName } from '../tls-mixed.ts';
import type { DeviceLoop, LoopLayout } from './tls-loop.ts';

/**
 * Mixed mode's loop (tls-loop.ts) where a frontend's is written or goes: its backend, with the
 * backends, before the port's frontend names it; its frontend after; both gone once the port
 * stops being Mixed (after the port's frontend no longer names them).
 */
export function loopOps(
  ctx: BuildContext,
  index: number,
  was: DeviceLoop | undefined,
  wanted: LoopLayout | undefined,
  ops: Ops,
): void {
  if (!wanted) {
    const f = was?.frontend;
    const b = was?.backend;
    if (f) ops.frontendDeletes.push({ index, run: (tx) => ctx.client.deleteFrontend(tx, f.name) });
    if (b) ops.backendDeletes.push({ index, run: (tx) => ctx.client.deleteBackend(tx, b.name) });
    return;
  }
  const name = wanted.backend.name;
  ops.backends.push({
    index,
    run: async (tx) => {
      await ctx.client.putBackend(tx, wanted.backend, was?.backend !== undefined);
      const servers = new Set((was?.servers ?? []).map((s) => s.name));
      for (const s of wanted.servers) await ctx.client.putServer(tx, name, s, servers.has(s.name));
      for (const stale of servers) {
        if (!wanted.servers.some((s) => s.name === stale)) await ctx.client.deleteServer(tx, name, stale);
      }
    },
  });
}

/**
 * Loop sections of a virtual service left without it (its frontend deleted by hand), read as owned
 * sections of their own (tls-loop.ts attachLoops): taken over when the virtual service is written.
 */
export function strayLoop(ctx: BuildContext, vs: string): DeviceLoop | undefined {
  const b = ctx.backends.get(loopName(vs));
  const f = ctx.frontends.get(loopName(vs));
  if (!b && !f) return undefined;
  return {
    ...(b ? { backend: b.backend } : {}),
    servers: b?.servers ?? [],
    ...(f ? { frontend: f.frontend } : {}),
    binds: f?.binds ?? [],
  };
}

/** The loop's frontend, its bind and switching rules (after the port's frontend, in its operation). */
export async function putLoopFrontend(
  ctx: BuildContext,
  tx: string,
  was: DeviceLoop | undefined,
  loop: LoopLayout,
): Promise<void> {
  const name = loop.frontend.name;
  await ctx.client.putFrontend(tx, loop.frontend, was?.frontend !== undefined);
  await putBinds(ctx, tx, name, was?.binds ?? [], loop.binds);
  if (was?.frontend || loop.rules.length > 0)
    await ctx.client.setList('backend_switching_rules', tx, name, loop.rules);
}

/** A frontend's binds as wanted: each written where it differs, the others deleted. */
export async function putBinds(
  ctx: BuildContext,
  tx: string,
  frontend: string,
  current: DpBind[],
  wanted: DpBind[],
): Promise<void> {
  const binds = new Map(current.map((b) => [b.name, b]));
  for (const b of wanted) {
    const was = binds.get(b.name);
    if (!was || JSON.stringify(was) !== JSON.stringify(b)) await ctx.client.putBind(tx, frontend, b, !!was);
    binds.delete(b.name);
  }
  for (const stale of binds.keys()) await ctx.client.deleteBind(tx, frontend, stale);
}
