/**
 * A Data Plane backend's server slots (layout.ts has the backend's own fields): members fill
 * slots named `s<k>_<node>` after the node of the member they were made for, a new member prefers
 * a free slot of its own node, a slot that loses its member goes into maintenance at an unused
 * address and waits for the next one, and slots come in steps (running out adds a step: one
 * reload). What each server carries: the pool's check timings, limit and ramp, HTTP/2 and TLS to
 * the members. Pure.
 */
import type { BackendTls, HttpCheck, Member } from '../../../src/model/types.ts';
import type { LayoutOptions } from './layout-options.ts';
import type { DpServer } from './models.ts';

/** Where a server's own metadata keeps node and Pod (v3). */
export const META_KEY = 'npl_lb';
/** Where a free slot points. */
const UNUSED = { address: '127.0.0.1', port: 1 };

export const memberKey = (m: { address: string; port?: number | undefined }): string =>
  `${m.address}:${m.port ?? 0}`;

const slotIndex = (name: string): number => Number(/^s(\d+)/.exec(name)?.[1] ?? 0);
/** The node a slot was named for ('' for a slot never used). */
export const slotNode = (name: string): string => /^s\d+_(.*)$/.exec(name)?.[1] ?? '';
const nodeWord = (node: string): string => node.replace(/[^A-Za-z0-9_.:-]/g, '_') || 'node';

export const isFree = (s: DpServer): boolean => s.maintenance === 'enabled';

/** What a pool sets on each of its servers: its check's timings, a BackendPolicy's limit and ramp. */
export interface SlotParams {
  check?: HttpCheck | undefined;
  maxConnections?: number | undefined;
  slowStartSeconds?: number | undefined;
  backendProtocol?: 'h2c' | undefined;
  backendTls?: BackendTls | undefined;
}

/**
 * TLS to the members (a BackendTLSPolicy): verified against the stored CA bundle, the policy's
 * hostname sent as SNI (a DNS name from the validation boundary) and verified, the checks too.
 */
const tlsFields = (t: BackendTls | undefined, o: LayoutOptions | undefined) =>
  t
    ? {
        ssl: 'enabled' as const,
        verify: 'required' as const,
        ssl_cafile: o?.caPath?.(t.ca) ?? '',
        sni: `str(${t.serverName})`,
        verifyhost: t.verifyNames[0] ?? t.serverName,
        ...(t.clientCertificate ? { ssl_certificate: o?.certPath?.(t.clientCertificate) ?? '' } : {}),
        ...(o?.healthChecks ? { 'check-sni': t.serverName } : {}),
      }
    : {};

const timings = (p: SlotParams | undefined, o?: LayoutOptions) => {
  const c = p?.check;
  return {
    ...(c
      ? {
          inter: c.intervalSeconds * 1000,
          rise: c.rise,
          fall: c.fall,
          // An HTTPS probe's check, unverified as the kubelet's; a TLS pool's checks are verified.
          ...(c.tls && !p?.backendTls ? { 'check-ssl': 'enabled' as const, verify: 'none' as const } : {}),
        }
      : {}),
    ...tlsFields(p?.backendTls, o),
    ...(p?.maxConnections ? { maxconn: p.maxConnections } : {}),
    // Milliseconds, as the Data Plane API counts a duration.
    ...(p?.slowStartSeconds ? { slowstart: p.slowStartSeconds * 1000 } : {}),
    // HTTP/2 to the members, with prior knowledge (the check speaks it too).
    ...(p?.backendProtocol === 'h2c' ? { proto: 'h2' } : {}),
  };
};

function filled(slot: string, m: Member, o: LayoutOptions, c?: SlotParams): DpServer {
  return {
    name: slot,
    address: m.address,
    port: m.port,
    check: o.healthChecks ? 'enabled' : 'disabled',
    ...timings(c, o),
    maintenance: 'disabled',
    weight: m.enabled ? 1 : 0,
    ...(o.apiVersion === 'v3' ? { metadata: { [META_KEY]: { node: m.node, pod: m.pod } } } : {}),
  };
}

function unused(slot: string, o: LayoutOptions, at = UNUSED, c?: SlotParams): DpServer {
  return {
    name: slot,
    address: at.address,
    port: at.port,
    check: o.healthChecks ? 'enabled' : 'disabled',
    ...timings(c, o),
    maintenance: 'enabled',
    weight: 1,
  };
}

/** The fields of a server that we set, for comparison. */
export function serverChanged(a: DpServer, b: DpServer): boolean {
  const pick = (s: DpServer) =>
    JSON.stringify([
      s.address,
      s.port,
      s.check,
      s.inter ?? null,
      s.rise ?? null,
      s.fall ?? null,
      s['check-ssl'] ?? null,
      s.verify ?? null,
      s.maxconn ?? null,
      s.slowstart ?? null,
      s.proto ?? null,
      s.ssl ?? null,
      s.ssl_cafile ?? null,
      s.ssl_certificate ?? null,
      s.sni ?? null,
      s.verifyhost ?? null,
      s['check-sni'] ?? null,
      s.maintenance,
      s.weight ?? 1,
      s.metadata?.[META_KEY] ?? null,
    ]);
  return pick(a) !== pick(b);
}

/**
 * The servers a backend should have for a pool: members keep their slots, departed members' slots
 * go into maintenance, new members take free slots (one named for their node first, then one
 * never used, then any); when none is left, a step of new slots is added (`grown`).
 */
export function assignSlots(
  current: DpServer[],
  members: Member[],
  o: LayoutOptions,
  pool?: SlotParams,
): { servers: DpServer[]; grown: boolean } {
  const c: SlotParams = {
    check: o.healthChecks ? pool?.check : undefined,
    maxConnections: pool?.maxConnections,
    slowStartSeconds: pool?.slowStartSeconds,
    backendProtocol: pool?.backendProtocol,
    backendTls: pool?.backendTls,
  };
  const wanted = new Map(members.map((m) => [memberKey(m), m]));
  const out = new Map<string, DpServer>();
  const taken = new Set<string>();
  for (const s of [...current].sort((a, b) => slotIndex(a.name) - slotIndex(b.name))) {
    const m = !isFree(s) ? wanted.get(memberKey(s)) : undefined;
    if (m && !taken.has(memberKey(m))) {
      taken.add(memberKey(m));
      out.set(s.name, filled(s.name, m, o, c));
    } else {
      // Free, or its member left: maintenance, address kept (fewer runtime changes).
      out.set(s.name, unused(s.name, o, { address: s.address, port: s.port ?? 1 }, c));
    }
  }
  const newcomers = members
    .filter((m) => !taken.has(memberKey(m)))
    .sort((a, b) => (memberKey(a) < memberKey(b) ? -1 : 1));
  let next = Math.max(0, ...[...out.keys()].map(slotIndex)) + 1;
  let grown = false;
  for (const m of newcomers) {
    const free = [...out.values()].filter(isFree);
    const slot =
      free.find((s) => slotNode(s.name) === nodeWord(m.node)) ??
      free.find((s) => slotNode(s.name) === '') ??
      free[0];
    if (slot) out.set(slot.name, filled(slot.name, m, o, c));
    else {
      const name = `s${next++}_${nodeWord(m.node)}`;
      out.set(name, filled(name, m, o, c));
      grown = true;
    }
  }
  // Whole steps of slots, the spare ones unused.
  while (out.size === 0 || out.size % o.slots !== 0) {
    const name = `s${next++}`;
    out.set(name, unused(name, o, UNUSED, c));
  }
  if (current.length > 0 && out.size > current.length) grown = true;
  return { servers: [...out.values()], grown };
}
