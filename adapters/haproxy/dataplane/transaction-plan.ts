/**
 * What one apply of the Data Plane transport does, pure planning over the device view the adapter
 * holds: the operations of one transaction (frontend deletes, backends and their server slots,
 * frontends with their binds and rule lists, backend deletes), what runs before it (crt-list files;
 * certificates an HTTPS frontend gains or loses past its default, at runtime) and after it (crt-lists
 * no frontend binds), and the device view once it is committed.
 */
import { crtListOf } from '../crt-list.ts';
import { FILE_PREFIX } from '../policy-read.ts';
import { isDeepStrictEqual } from 'node:util';
import type { CoreChange as Change } from '../../../src/adapter/changes.ts';
import { normalizeVirtualService } from '../../../src/model/normalize.ts';
import type { Pool, VirtualService } from '../../../src/model/types.ts';
import { withoutExtraCertificates } from '../cert-store.ts';
import { type Fail, httpPools } from '../validate.ts';
import { dependencyProblem } from '../../../src/adapter/preflight.ts';
import type { DpCertificates } from './certificates.ts';
import type { DataplaneClient } from './client.ts';
import {
  type DeviceFrontend,
  type FrontendLayout,
  frontendFor,
  readVirtualService,
} from './frontend-layout.ts';
import { loopOps, putBinds, putLoopFrontend, strayLoop } from './loop-ops.ts';
import { mirrorScriptOps, mirrorScriptPrune, putMirrors } from './mirror-ops.ts';
import { hasMirrors, MIRROR_LUA_FILE } from '../mirrors.ts';
import { isMixed, loopName } from '../tls-mixed.ts';
import {
  assignSlots,
  backendChanged,
  backendFor,
  type DeviceBackend,
  httpChecksFor,
  backendRequestRulesFor,
  stickRulesFor,
  type LayoutOptions,
  memberKey,
  readPool,
  serverChanged,
} from './layout.ts';

export interface BuildContext {
  client: DataplaneClient;
  certs: DpCertificates;
  layout: LayoutOptions;
  /** The device as last read or applied (the adapter's; cert-only changes update it as they run). */
  backends: Map<string, DeviceBackend>;
  frontends: Map<string, DeviceFrontend>;
}

export interface Op {
  /** The change this operation belongs to (-1: several or none). */
  index: number;
  run: (tx: string) => Promise<void>;
}

export interface Built {
  /** Before the transaction: crt-list files, and certificates frontends gain or lose at runtime. */
  pre: Op[];
  ops: Op[];
  /** After the commit: crt-lists no frontend binds any more. */
  post: Op[];
  backends: Map<string, DeviceBackend | undefined>;
  frontends: Map<string, DeviceFrontend | undefined>;
}

/** Whether an HTTPS frontend changes only in the certificates past its default. */
export function certificatesOnly(cur: DeviceFrontend, v: VirtualService): boolean {
  const was = readVirtualService(cur);
  return isDeepStrictEqual(
    normalizeVirtualService(withoutExtraCertificates(was)),
    normalizeVirtualService(withoutExtraCertificates(v)),
  );
}

/**
 * The lists of a backend being written, which follow its pool (in its description too): its
 * http-check rules (the check), stick rules (persistence) and http-request rules (route timeouts),
 * each replaced with it; a new backend's empty ones are not written.
 */
function backendLists(
  ctx: BuildContext,
  name: string,
  pool: Pool,
  http: boolean,
  exists: boolean,
): ((tx: string) => Promise<void>)[] {
  const lists = [
    ['http_checks', httpChecksFor(pool, ctx.layout)],
    ['stick_rules', stickRulesFor(pool)],
    ['http_request_rules', backendRequestRulesFor(pool, http)],
  ] as const;
  return lists
    .filter(([, items]) => exists || items.length > 0)
    .map(
      ([kind, items]) =>
        (tx: string) =>
          ctx.client.setList(kind, tx, name, items, 'backend'),
    );
}

/** The operations of a transaction, grouped in the order they run. */
export interface Ops {
  frontendDeletes: Op[];
  backends: Op[];
  frontends: Op[];
  backendDeletes: Op[];
}

/**
 * The device's pools and virtual services once the changes not failed are in, and which change
 * (its index) each touched name belongs to; a virtual service whose pool is missing fails.
 */
function stateAfter(ctx: BuildContext, changes: Change[], failed: Map<number, Fail>) {
  const pools = new Map<string, Pool>([...ctx.backends.values()].map((d) => [d.backend.name, readPool(d)]));
  const vss = new Map<string, VirtualService>(
    [...ctx.frontends.values()].map((d) => [d.frontend.name, readVirtualService(d)]),
  );
  const poolChange = new Map<string, number>();
  const vsChange = new Map<string, number>();
  changes.forEach((c, i) => {
    if (failed.has(i) || c.kind !== 'pool') return;
    poolChange.set(c.name, i);
    if (c.op === 'delete') pools.delete(c.name);
    else pools.set(c.name, c.desired);
  });
  changes.forEach((c, i) => {
    if (failed.has(i) || c.kind !== 'virtualService') return;
    if (c.op !== 'delete') {
      const dep = dependencyProblem(c.desired, { pool: (p) => pools.has(p) });
      if (dep) return void failed.set(i, dep);
    }
    vsChange.set(c.name, i);
    if (c.op === 'delete') vss.delete(c.name);
    else vss.set(c.name, c.desired);
  });
  return { pools, vss, poolChange, vsChange };
}

/** One backend: deleted, or written where it changed, with its lists and the server slots that changed. */
function backendOps(
  ctx: BuildContext,
  name: string,
  index: number,
  pool: Pool | undefined,
  http: boolean,
  ops: Ops,
  out: Built,
): void {
  const cur = ctx.backends.get(name);
  if (!pool) {
    if (cur) ops.backendDeletes.push({ index, run: (tx) => ctx.client.deleteBackend(tx, name) });
    out.backends.set(name, undefined);
    return;
  }
  const wanted = backendFor(pool, http, ctx.layout);
  const slots = assignSlots(cur?.servers ?? [], pool.members, ctx.layout, pool);
  const writeBackend =
    !cur || backendChanged(cur.backend, wanted) || (slots.grown && ctx.layout.apiVersion === 'v2');
  if (writeBackend) {
    ops.backends.push({ index, run: (tx) => ctx.client.putBackend(tx, wanted, cur !== undefined) });
    for (const run of backendLists(ctx, name, pool, http, cur !== undefined))
      ops.backends.push({ index, run });
  }
  const old = new Map((cur?.servers ?? []).map((s) => [s.name, s]));
  for (const s of slots.servers) {
    const was = old.get(s.name);
    if (!was || serverChanged(was, s)) {
      ops.backends.push({ index, run: (tx) => ctx.client.putServer(tx, name, s, was !== undefined) });
    }
  }
  out.backends.set(name, {
    backend: writeBackend ? wanted : cur!.backend,
    servers: slots.servers,
    known: new Map(pool.members.map((m) => [memberKey(m), { node: m.node, pod: m.pod }])),
  });
}

/**
 * The device's frontend once one is written as laid out: its crt-list's certificates (a frontend
 * terminating TLS), Mixed mode's loop without its rules (not read back), and the hosts asking
 * client certificates with each CA as the stored file.
 */
function deviceView(
  ctx: BuildContext,
  f: FrontendLayout,
  v: VirtualService,
  certificates: string[] | undefined,
): DeviceFrontend {
  const loop = f.loop && {
    backend: f.loop.backend,
    servers: f.loop.servers,
    frontend: f.loop.frontend,
    binds: f.loop.binds,
  };
  return {
    frontend: f.frontend,
    binds: f.binds,
    ...(certificates ? { certificates } : {}),
    ...(loop ? { loop } : {}),
    // Mirrors as written: served (the script and the global written in the same apply).
    ...(f.mirrors
      ? {
          mirrors: f.mirrors,
          servedMirrors: new Set(f.mirrors.map((m) => m.frontend.default_backend ?? '')),
        }
      : {}),
    ...(v.kind === 'l7' && v.hostClientValidation
      ? {
          hostClientValidation: v.hostClientValidation.map((h) => ({
            ...h,
            ca: `${FILE_PREFIX}${ctx.layout.caPath?.(h.ca) ?? ''}`,
          })),
        }
      : {}),
  };
}

/**
 * One frontend: deleted, its crt-list changed alone (only certificates past its default moved),
 * or written with its binds and rule lists (and Mixed mode's loop), its crt-list written first
 * and removed after.
 */
function frontendOps(
  ctx: BuildContext,
  name: string,
  index: number,
  v: VirtualService | undefined,
  ops: Ops,
  out: Built,
): void {
  const cur = ctx.frontends.get(name);
  const wasHttps = cur?.certificates !== undefined;
  if (!v) {
    if (cur) ops.frontendDeletes.push({ index, run: (tx) => ctx.client.deleteFrontend(tx, name) });
    for (const m of cur?.mirrors ?? [])
      ops.frontendDeletes.push({ index, run: (tx) => ctx.client.deleteFrontend(tx, m.frontend.name) });
    loopOps(ctx, index, cur?.loop, undefined, ops);
    if (wasHttps) out.post.push({ index: -1, run: () => ctx.certs.removeCrtList(name) });
    out.frontends.set(name, undefined);
    return;
  }
  // Frontends terminating TLS (HTTPS, TLS in Terminate mode) have a crt-list.
  const listed = crtListOf(v);
  const https = listed !== undefined;
  const certificates = listed ?? [];
  if (https && cur && wasHttps && certificatesOnly(cur, v)) {
    // The default certificate stays: the crt-list changes, the configuration does not.
    out.pre.push({
      index,
      run: async () => {
        await ctx.certs.changeCrtList(name, cur.certificates ?? [], certificates);
        ctx.frontends.set(name, { ...cur, certificates });
      },
    });
    return;
  }
  let crtList: string | undefined;
  if (https)
    out.pre.push({
      index,
      run: async () => void (crtList = await ctx.certs.writeCrtList(v, (ca) => ctx.layout.caPath?.(ca))),
    });
  if (wasHttps && !https) out.post.push({ index: -1, run: () => ctx.certs.removeCrtList(name) });
  // The loop's backend does not depend on the crt-list: laid out now, written with the backends.
  // A stray loop is taken over by a Mixed port only; otherwise it goes as sections of its own.
  const mixed = v.kind === 'l4' && isMixed(v);
  const wasLoop = cur?.loop ?? (mixed ? strayLoop(ctx, name) : undefined);
  loopOps(ctx, index, wasLoop, mixed ? frontendFor(v, ctx.layout, '').loop : undefined, ops);
  ops.frontends.push({
    index,
    run: async (tx) => {
      const f = frontendFor(v, ctx.layout, crtList);
      await ctx.client.putFrontend(tx, f.frontend, cur !== undefined);
      await putBinds(ctx, tx, name, cur?.binds ?? [], f.binds);
      const lists = [
        ['acls', f.acls],
        ['backend_switching_rules', f.rules],
        ['http_request_rules', f.httpRequest],
        ['http_response_rules', f.httpResponse],
        ['tcp_request_rules', f.tcpRequest],
      ] as const;
      for (const [kind, items] of lists) {
        if (cur || items.length > 0) await ctx.client.setList(kind, tx, name, items);
      }
      if (f.loop) await putLoopFrontend(ctx, tx, wasLoop, f.loop);
      if (cur?.mirrors || f.mirrors) await putMirrors(ctx, tx, cur?.mirrors ?? [], f.mirrors ?? []);
      out.frontends.set(name, deviceView(ctx, f, v, https ? certificates : undefined));
    },
  });
}

/** The operations of one transaction for the changes not failed, and the device view after it. */
export function buildOps(ctx: BuildContext, changes: Change[], failed: Map<number, Fail>): Built {
  const { pools, vss, poolChange, vsChange } = stateAfter(ctx, changes, failed);
  // A pool that becomes (or stops being) an HTTP route's backend is written again too.
  const http = httpPools(vss.values());
  const before = httpPools([...ctx.frontends.values()].map(readVirtualService));
  const ops: Ops = { frontendDeletes: [], backends: [], frontends: [], backendDeletes: [] };
  const out: Built = { pre: [], ops: [], post: [], backends: new Map(), frontends: new Map() };
  const touched = new Set([...poolChange.keys(), ...[...http].filter((p) => !before.has(p))]);
  for (const p of before) if (!http.has(p)) touched.add(p);
  // Stray loop sections a Mixed virtual service takes over are not deleted as sections of their own.
  const loops = new Set(
    [...vss.values()].filter((v) => v.kind === 'l4' && isMixed(v)).map((v) => loopName(v.name)),
  );
  const takenOver = (name: string, kind: 'backends' | 'frontends'): boolean => {
    if (!loops.has(name)) return false;
    out[kind].set(name, undefined);
    return true;
  };
  for (const name of touched) {
    if (!pools.has(name) && takenOver(name, 'backends')) continue;
    backendOps(ctx, name, poolChange.get(name) ?? -1, pools.get(name), http.has(name), ops, out);
  }
  for (const [name, index] of vsChange) {
    if (!vss.has(name) && takenOver(name, 'frontends')) continue;
    frontendOps(ctx, name, index, vss.get(name), ops, out);
  }
  if (vsChange.size > 0 && hasMirrors(vss.values())) mirrorScriptOps(ctx, ops, out);
  else if (vsChange.size > 0 && ctx.certs.storedFiles().has(MIRROR_LUA_FILE))
    mirrorScriptPrune(ctx, ops, out);
  out.ops = [...ops.frontendDeletes, ...ops.backends, ...ops.frontends, ...ops.backendDeletes];
  return out;
}
