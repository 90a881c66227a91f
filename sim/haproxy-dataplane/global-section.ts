/**
 * The global section of the simulated Data Plane API: the fields of the spec's `global` model this
 * simulator renders, the Lua scripts it loads (v2 `lua_loads`, v3 `lua_options.loads`, each a
 * `{ file }`, written `lua-load <file>`); a field it would drop is refused (422), as the other
 * collections refuse theirs. Its other lines (the stats socket, timeouts) are the simulator's own.
 */
import { z } from 'zod';
import type { ApiVersion } from '../../adapters/haproxy/dataplane/models.ts';
import { DpError } from './config-crud.ts';

const loads = z.array(z.object({ file: z.string().regex(/^\/\S+$/) }).strict());
const v2 = z.object({ lua_loads: loads.optional() }).strict();
const v3 = z.object({ lua_options: z.object({ loads: loads.optional() }).strict().optional() }).strict();

/** The scripts the section loads, as stored (the v3 shape). */
export function globalLines(g: Record<string, unknown>): string[] {
  const list = (g.lua_options as { loads?: { file: string }[] } | undefined)?.loads ?? [];
  return list.map((l) => `    lua-load ${l.file}`);
}

/** The section as the version shows it. */
export function readGlobal(v: ApiVersion, g: Record<string, unknown>): Record<string, unknown> {
  const list = (g.lua_options as { loads?: { file: string }[] } | undefined)?.loads;
  if (!list) return {};
  return v === 'v2' ? { lua_loads: list } : { lua_options: { loads: list } };
}

/** A PUT of the section: what it renders, stored in the v3 shape; anything else refused. */
export function writeGlobal(v: ApiVersion, body: unknown): Record<string, unknown> {
  const parsed = (v === 'v2' ? v2 : v3).safeParse(body ?? {});
  if (!parsed.success)
    throw new DpError(
      422,
      `global: ${parsed.error.issues[0]?.message ?? 'invalid'} (this simulator renders lua loads only)`,
    );
  const list =
    v === 'v2'
      ? (parsed.data as z.infer<typeof v2>).lua_loads
      : (parsed.data as z.infer<typeof v3>).lua_options?.loads;
  return list && list.length > 0 ? { lua_options: { loads: list } } : {};
}
