/**
 * The load-balancer state seen from the nodes, for LB admins: for every node, the members it
 * serves with their pool, the virtual services in front of it, the Pod, the state (enabled or
 * draining) and the pool's last apply result. Pure; the dashboard (GET /api/v1/nodes) and
 * `npl-lb pools` both use it. The state document is parsed with zod, as any input at a boundary.
 */
import { hostPort } from '../model/names.ts';
import { z } from 'zod';

const applySchema = z
  .object({
    ok: z.boolean(),
    op: z.string(),
    at: z.string(),
    error: z.object({ code: z.string(), message: z.string(), terminal: z.boolean() }).optional(),
  })
  .nullable();

const memberHealthSchema = z.object({
  state: z.enum(['up', 'down', 'unchecked', 'unknown']),
  admin: z.enum(['enabled', 'draining', 'maint']),
  reason: z.string().optional(),
  at: z.string(),
});

export const stateDocumentSchema = z.object({
  apiVersion: z.literal('npl-lb.io/v1'),
  kind: z.literal('LoadBalancerState'),
  clusterName: z.string(),
  adapter: z.string(),
  generatedAt: z.string(),
  leadership: z
    .object({
      role: z.enum(['leader', 'standby', 'single']),
      identity: z.string(),
      holder: z.string(),
      since: z.string().nullable(),
    })
    .optional(),
  virtualServices: z.array(
    z.looseObject({
      kind: z.enum(['l4', 'l7']),
      name: z.string(),
      vip: z.string(),
      port: z.number(),
      pool: z.string().optional(),
      routes: z
        .array(
          z.looseObject({
            host: z.string(),
            path: z.string(),
            pool: z.string(),
            backends: z.array(z.looseObject({ pool: z.string().nullable(), weight: z.number() })).optional(),
          }),
        )
        .optional(),
      sni: z.array(z.looseObject({ host: z.string(), pool: z.string() })).optional(),
      defaultPool: z.string().nullable().optional(),
      protocol: z.string().optional(),
      certificates: z
        .array(
          z.object({
            name: z.string(),
            subject: z.string(),
            sans: z.array(z.string()),
            notAfter: z.string(),
          }),
        )
        .optional(),
      lastApply: applySchema.optional(),
    }),
  ),
  pools: z.array(
    z.looseObject({
      name: z.string(),
      service: z.string(),
      members: z.array(
        z.object({
          address: z.string(),
          port: z.number(),
          node: z.string(),
          pod: z.string(),
          enabled: z.boolean(),
          health: memberHealthSchema.nullable().optional(),
          gate: z.object({ status: z.string(), reason: z.string().optional() }).optional(),
          history: z.array(z.object({ at: z.string(), what: z.string() })).optional(),
        }),
      ),
      lastApply: applySchema,
    }),
  ),
});

export type MemberHealthInput = z.infer<typeof memberHealthSchema>;

/** What the view needs of a state document (the controller's own, or one parsed from the API). */
export interface StateInput {
  virtualServices: {
    name: string;
    kind?: string | undefined;
    vip: string;
    port: number;
    protocol?: string | undefined;
    pool?: string | undefined;
    routes?:
      | {
          pool: string;
          host?: string | undefined;
          path?: string | undefined;
          /** A split by weight (`pool` '' then; a null pool answers 500). */
          backends?: { pool: string | null; weight: number }[] | undefined;
        }[]
      | undefined;
    /** TLS passthrough routes by SNI (`pool` '' then). */
    sni?: { host: string; pool: string }[] | undefined;
    defaultPool?: string | null | undefined;
    /** What was read from the certificates served (never a key). */
    certificates?: { name: string; subject: string; sans: string[]; notAfter: string }[] | undefined;
    lastApply?: ApplyInput | null | undefined;
  }[];
  pools: {
    name: string;
    service: string;
    members: {
      address: string;
      port: number;
      node: string;
      pod: string;
      enabled: boolean;
      health?: MemberHealthInput | null | undefined;
      gate?: { status: string; reason?: string | undefined } | undefined;
      history?: { at: string; what: string }[] | undefined;
    }[];
    lastApply: ApplyInput | null;
  }[];
}

type ApplyInput = { ok: boolean; at: string; error?: { code: string; message: string } | undefined };

export interface NodeMember {
  address: string;
  port: number;
  pod: string;
  /** Our intent: enabled, or draining (not ready, terminating, or its node in maintenance). */
  state: 'enabled' | 'draining';
  /** The device's health check ('unknown' until read, or when the device cannot say). */
  health: MemberHealthInput['state'];
  /** The device's admin state, when read ('maint': set there by hand). */
  deviceAdmin: MemberHealthInput['admin'] | null;
  healthReason: string | null;
  healthAt: string | null;
  /** The Pod's readiness gate (`True`, `False (MemberNotApplied)`), null when it lists none. */
  gate: string | null;
  /** Its last hour, oldest first (health changes, changes applied). */
  history: { at: string; what: string }[];
  pool: string;
  /** namespace/name of the Service the pool stands for. */
  service: string;
  /** The virtual services in front of the pool, as `name (vip:port)`. */
  virtualServices: string[];
  lastApply: 'ok' | 'failed' | 'pending';
  lastApplyAt: string | null;
  lastError: string | null;
}

export interface NodeView {
  /** '' for members with no node (ClusterIP mode). */
  node: string;
  members: NodeMember[];
}

export interface ViewFilter {
  node?: string | undefined;
  namespace?: string | undefined;
}

/** The pools a virtual service sends traffic to: its pool, routes (split ones too), SNI routes, default. */
export function poolsOf(vs: StateInput['virtualServices'][number]): string[] {
  const all = [
    vs.pool,
    ...(vs.routes ?? []).flatMap((r) => [r.pool, ...(r.backends ?? []).map((b) => b.pool)]),
    ...(vs.sni ?? []).map((r) => r.pool),
    vs.defaultPool,
  ];
  return [...new Set(all.filter((p): p is string => !!p))];
}

export function byNode(doc: StateInput, filter: ViewFilter = {}): NodeView[] {
  const front = new Map<string, string[]>();
  const add = (pool: string | null | undefined, label: string) => {
    if (pool) front.set(pool, [...new Set([...(front.get(pool) ?? []), label])]);
  };
  for (const vs of doc.virtualServices) {
    const label = `${vs.name} (${hostPort(vs.vip, vs.port)})`;
    for (const p of poolsOf(vs)) add(p, label);
  }
  const nodes = new Map<string, NodeMember[]>();
  for (const p of doc.pools) {
    if (filter.namespace && p.service.split('/')[0] !== filter.namespace) continue;
    for (const m of p.members) {
      if (filter.node !== undefined && filter.node !== '' && m.node !== filter.node) continue;
      const list = nodes.get(m.node) ?? [];
      list.push({
        address: m.address,
        port: m.port,
        pod: m.pod,
        state: m.enabled ? 'enabled' : 'draining',
        health: m.health?.state ?? 'unknown',
        deviceAdmin: m.health?.admin ?? null,
        healthReason: m.health?.reason ?? null,
        healthAt: m.health?.at ?? null,
        gate: m.gate
          ? `${m.gate.status}${m.gate.reason && m.gate.status !== 'True' ? ` (${m.gate.reason})` : ''}`
          : null,
        history: m.history ?? [],
        pool: p.name,
        service: p.service,
        virtualServices: front.get(p.name) ?? [],
        lastApply: p.lastApply === null ? 'pending' : p.lastApply.ok ? 'ok' : 'failed',
        lastApplyAt: p.lastApply?.at ?? null,
        lastError: p.lastApply?.error ? `${p.lastApply.error.code}: ${p.lastApply.error.message}` : null,
      });
      nodes.set(m.node, list);
    }
  }
  const key = (m: NodeMember) => `${m.pool}|${m.address}|${String(m.port).padStart(5, '0')}`;
  return [...nodes.entries()]
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([node, members]) => ({ node, members: members.sort((a, b) => (key(a) < key(b) ? -1 : 1)) }));
}

/** Columns of plain-text tables: the last one is not padded. */
export function columns(head: string[], rows: string[][]): string {
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (r: string[]) => r.map((c, i) => (i === r.length - 1 ? c : c.padEnd(widths[i]!))).join('  ');
  return [line(head), ...rows.map(line)].join('\n') + '\n';
}

/** The same as a plain-text table, one member per line under its node; `wide` adds the details. */
export function renderTable(view: NodeView[], wide = false): string {
  const head = ['NODE', 'MEMBER', 'POD', 'STATE', 'HEALTH', 'POOL', 'VIRTUAL SERVICES', 'LAST APPLY'];
  if (wide) head.splice(5, 0, 'DEVICE ADMIN', 'HEALTH DETAIL', 'HEALTH READ', 'READINESS GATE');
  const rows = view.flatMap((n) =>
    n.members.map((m) => {
      const r = [
        n.node || '(none)',
        hostPort(m.address, m.port),
        m.pod || '-',
        m.state,
        m.health,
        m.pool,
        m.virtualServices.join(', ') || '-',
        m.lastApply === 'failed' ? `failed (${m.lastError ?? ''})` : m.lastApply,
      ];
      if (wide) {
        r.splice(5, 0, m.deviceAdmin ?? '-', m.healthReason ?? '-', m.healthAt ?? '-', m.gate ?? '-');
        r[r.length - 1] = `${r[r.length - 1]!}${m.lastApplyAt ? ` at ${m.lastApplyAt}` : ''}`;
      }
      return r;
    }),
  );
  return columns(head, rows);
}

/** The line a standby's views show instead of an empty table's silence. */
export function standbyBanner(
  l: { role: string; holder: string; since: string | null } | undefined,
): string | undefined {
  if (l?.role !== 'standby') return undefined;
  return `standby: this replica does not write; the leader is ${l.holder || '(none yet)'}${l.since ? ` since ${l.since}` : ''}`;
}
