/**
 * Request mirrors (mirror-layout.ts) on the device: whether its script is loaded as we wrote it,
 * and, in a Data Plane transaction (transaction-plan.ts), the script stored before it (written
 * again where it is missing or differs), the global section made to load it inside it (or, once
 * none of our routes mirrors, no longer), and a virtual service's mirror frontends written after
 * its own frontend (their pools are written before), those it no longer wants deleted.
 */
import { MIRROR_LUA, MIRROR_LUA_FILE } from '../mirrors.ts';
import type { DpCertificates } from './certificates.ts';
import type { DataplaneClient } from './client.ts';
import { putBinds } from './loop-ops.ts';
import { ownerOf } from './layout.ts';
import { luaLoads, mirrorOf, type MirrorSection, withLuaLoad, withoutLuaLoad } from './mirror-layout.ts';
import type { BuildContext, Built, Ops } from './transaction-plan.ts';

/** Whether the global section loads our mirrors' script, stored as we write it (mirrors.ts). */
export async function mirrorScriptLoaded(client: DataplaneClient, certs: DpCertificates): Promise<boolean> {
  const path = certs.storedFiles().get(MIRROR_LUA_FILE);
  if (path === undefined || !luaLoads(await client.global()).includes(path)) return false;
  return (await certs.readGeneral(MIRROR_LUA_FILE)) === MIRROR_LUA;
}

/**
 * The script stored as we write it, before the transaction; the global loading it, inside it. A
 * stored script that differs (changed by hand) is written again with a reload of its own: the
 * running HAProxy may have loaded the changed one, and the transaction may change nothing else.
 */
export function mirrorScriptOps(ctx: BuildContext, ops: Ops, out: Built): void {
  out.pre.push({
    index: -1,
    run: async () => {
      if (!ctx.certs.storedFiles().has(MIRROR_LUA_FILE))
        await ctx.certs.writeGeneral(MIRROR_LUA_FILE, MIRROR_LUA);
      else if ((await ctx.certs.readGeneral(MIRROR_LUA_FILE)) !== MIRROR_LUA)
        await ctx.certs.writeGeneral(MIRROR_LUA_FILE, MIRROR_LUA, { force_reload: true });
    },
  });
  ops.backends.unshift({
    index: -1,
    run: async (tx) => {
      const path = ctx.certs.storedFiles().get(MIRROR_LUA_FILE);
      if (path === undefined) throw new Error(`${MIRROR_LUA_FILE} is not in the storage`);
      const g = await ctx.client.global(tx);
      if (!luaLoads(g).includes(path))
        await ctx.client.putGlobal(tx, withLuaLoad(g, ctx.layout.apiVersion, path));
    },
  });
}

/**
 * None of our routes mirrors any more, and the script is stored: unless another owner's mirror
 * frontend is on the device (two clusters share one HAProxy, and the script), the global section
 * stops loading it inside the transaction, and the script is deleted after the commit (the reload
 * it makes no longer loads it).
 */
export function mirrorScriptPrune(ctx: BuildContext, ops: Ops, out: Built): void {
  let pruned = false;
  ops.backends.unshift({
    index: -1,
    run: async (tx) => {
      const others = (await ctx.client.frontends(tx)).some(
        (f) => mirrorOf(f.description) !== undefined && ownerOf(f) !== ctx.layout.owner,
      );
      if (others) return;
      const path = ctx.certs.storedFiles().get(MIRROR_LUA_FILE);
      const g = await ctx.client.global(tx);
      if (path !== undefined && luaLoads(g).includes(path))
        await ctx.client.putGlobal(tx, withoutLuaLoad(g, path));
      pruned = true;
    },
  });
  out.post.push({
    index: -1,
    run: async () => {
      if (pruned) await ctx.certs.deleteGeneral(MIRROR_LUA_FILE);
    },
  });
}

/** A virtual service's mirror frontends as wanted (after its own frontend, in its operation). */
export async function putMirrors(
  ctx: BuildContext,
  tx: string,
  current: readonly MirrorSection[],
  wanted: readonly MirrorSection[],
): Promise<void> {
  const was = new Map(current.map((s) => [s.frontend.name, s]));
  for (const s of wanted) {
    const cur = was.get(s.frontend.name);
    if (!cur || JSON.stringify(cur.frontend) !== JSON.stringify(s.frontend))
      await ctx.client.putFrontend(tx, s.frontend, cur !== undefined);
    await putBinds(ctx, tx, s.frontend.name, cur?.binds ?? [], s.binds);
    was.delete(s.frontend.name);
  }
  for (const stale of was.keys()) await ctx.client.deleteFrontend(tx, stale);
}
