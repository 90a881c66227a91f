/**
 * Request mirrors (mirrors.ts) on the Data Plane transport, as the runtime transport writes them:
 * each mirrored pool a frontend of the virtual service (`npl-lb mirror partOf=<vs> pool=<pool>`
 * in its description) binding the abstract socket its routes' `lua` rules send to, its default
 * backend the pool; the script a file of `storage/general`, loaded by the global section (v2
 * `lua_loads`, v3 `lua_options.loads`). Read back, a route keeps only the mirrors whose frontend is
 * there as written, and none where the global does not load our script as we wrote it, so a hand
 * edit of any of the three is written again by the next pass. Pure.
 */
import type { VirtualService } from '../../../src/model/types.ts';
import { enc } from '../config.ts';
import { mirrorFrontend, mirrorPools, mirrorSocket } from '../mirrors.ts';
import { dec, words } from './layout.ts';
import type { ApiVersion, DpBind, DpFrontend, DpGlobal } from './models.ts';
import type { DeviceFrontend } from './frontend-layout.ts';

/** A mirror's frontend and its bind, as written or read. */
export interface MirrorSection {
  frontend: DpFrontend;
  binds: DpBind[];
}

const BIND = 'mirror';

/** The virtual service and pool a frontend is the mirror of (its description), else undefined. */
export function mirrorOf(description: string | undefined): { partOf: string; pool: string } | undefined {
  if (!/^npl-lb mirror\b/.test(description ?? '')) return undefined;
  const w = words(description);
  const partOf = dec(w.partOf);
  const pool = dec(w.pool);
  return partOf !== undefined && pool !== undefined ? { partOf, pool } : undefined;
}

/** A virtual service's mirror frontends, one per pool its routes copy requests to. */
export function mirrorLayouts(v: VirtualService, o: { owner: string; instance: string }): MirrorSection[] {
  if (v.kind !== 'l7') return [];
  return mirrorPools(v).map((pool, k) => ({
    frontend: {
      name: mirrorFrontend(v.name, k),
      mode: 'http',
      default_backend: pool,
      description: `npl-lb mirror partOf=${enc(v.name)} pool=${enc(pool)} owner=${enc(o.owner)}`,
    },
    binds: [{ name: BIND, address: mirrorSocket(v.name, pool, o.instance) }],
  }));
}

/**
 * The pools a virtual service's mirror frontends serve as written (their socket the one its rules
 * send to, their default backend the pool), where the global loads our script.
 */
export function servedMirrorPools(
  vs: string,
  sections: readonly MirrorSection[],
  instance: string,
  scriptLoaded: boolean,
): Set<string> {
  const out = new Set<string>();
  if (!scriptLoaded) return out;
  for (const s of sections) {
    const m = mirrorOf(s.frontend.description);
    const bind = s.binds[0];
    if (
      m &&
      m.partOf === vs &&
      s.frontend.default_backend === m.pool &&
      s.binds.length === 1 &&
      bind?.address === mirrorSocket(vs, m.pool, instance) &&
      bind.port === undefined
    )
      out.add(m.pool);
  }
  return out;
}

/** The scripts the global section loads. */
export const luaLoads = (g: DpGlobal): string[] =>
  [...(g.lua_loads ?? []), ...(g.lua_options?.loads ?? [])].map((l) => l.file);

/** The global section with `file` loaded too, in the version's field. */
export function withLuaLoad(g: DpGlobal, v: ApiVersion, file: string): DpGlobal {
  if (luaLoads(g).includes(file)) return g;
  if (v === 'v2') return { ...g, lua_loads: [...(g.lua_loads ?? []), { file }] };
  return { ...g, lua_options: { ...g.lua_options, loads: [...(g.lua_options?.loads ?? []), { file }] } };
}

/** The global section without `file` among its scripts, in whichever field held it. */
export function withoutLuaLoad(g: DpGlobal, file: string): DpGlobal {
  const out = { ...g };
  if (g.lua_loads) out.lua_loads = g.lua_loads.filter((l) => l.file !== file);
  if (g.lua_options?.loads)
    out.lua_options = { ...g.lua_options, loads: g.lua_options.loads.filter((l) => l.file !== file) };
  return out;
}

/**
 * The mirror frontends read, attached to their virtual services' frontends with the pools they
 * serve as written; one whose virtual service is not there (left by hand) stays an owned frontend
 * of its own, which no pass wants: the next one deletes it.
 */
export function attachMirrors(
  frontends: Map<string, DeviceFrontend>,
  sections: readonly MirrorSection[],
  instance: string,
  scriptLoaded: boolean,
): void {
  for (const s of sections) {
    const owner = frontends.get(mirrorOf(s.frontend.description)?.partOf ?? '');
    if (owner) (owner.mirrors ??= []).push(s);
    else frontends.set(s.frontend.name, s);
  }
  for (const [name, d] of frontends)
    if (d.mirrors) d.servedMirrors = servedMirrorPools(name, d.mirrors, instance, scriptLoaded);
}
