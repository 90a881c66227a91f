/**
 * The gates of a load-balancer pass, as a pure policy over an explicit value: which planned changes
 * go to the device now, and why each other one waits.
 * - `inflight`: another pass is applying the object now (two writes to one object never race).
 * - `dependsOnInflight`: a virtual service whose pool or certificate is in flight, or a pool or
 *   certificate delete while any virtual service is in flight (order holds).
 * - `parked`: its last apply failed terminally and its desired state is still what failed.
 * - `dependsOnParked`: a virtual service whose pool or certificate change is held as parked.
 * - `poolInterval`: a pool update less than the interval after the pool's last write (a pool is
 *   written at most once per interval however often its Pods change); `waitMs` says until when.
 */
import { isDeepStrictEqual } from 'node:util';
import { certificateRefs, poolRefs } from '../model/refs.ts';
import type { Change } from '../plan/diff.ts';

export interface GateState {
  /** Objects (kind/name) other passes are applying now. */
  inflight: ReadonlySet<string>;
  /** Objects whose last apply failed terminally, with what failed ('delete' for a delete). */
  parked: ReadonlyMap<string, object | 'delete'>;
  /** When each pool was last written (ms). */
  poolWrites: ReadonlyMap<string, number>;
  now: number;
  poolIntervalMs: number;
  /**
   * Pools and certificates (kind/name) whose change this pass holds as parked: a virtual service
   * that refers to one waits with it instead of failing for what it refers to (and being parked
   * for that, for good).
   */
  heldParked?: ReadonlySet<string>;
}

export type Verdict =
  | { gate: 'go'; unpark: boolean }
  | { gate: 'inflight' | 'dependsOnInflight' | 'dependsOnParked' | 'parked' }
  | { gate: 'poolInterval'; waitMs: number };

export const objectKey = (c: Change): string => `${c.kind}/${c.name}`;

/** What a change asks the device for: the desired object, or 'delete'. */
export const wantedOf = (c: Change): object | 'delete' => (c.op === 'delete' ? 'delete' : c.desired);

/**
 * Whether a terminal failure parks its object. Not when a virtual service refers to a pool or
 * certificate whose own change failed in the same call: it was refused for what it refers to
 * (a pool that was not created), and is sent again once that is there.
 */
export function parks(c: Change, failed: ReadonlySet<string>): boolean {
  if (c.kind !== 'virtualService' || c.op === 'delete') return true;
  return ![
    ...poolRefs(c.desired).map((n) => `pool/${n}`),
    ...certificateRefs(c.desired).map((n) => `certificate/${n}`),
  ].some((k) => failed.has(k));
}

export function gate(c: Change, s: GateState): Verdict {
  const k = objectKey(c);
  if (s.inflight.has(k)) return { gate: 'inflight' };
  if (c.kind === 'pool' || c.kind === 'certificate') {
    if (c.op === 'delete' && [...s.inflight].some((x) => x.startsWith('virtualService/')))
      return { gate: 'dependsOnInflight' };
  } else if (
    c.op !== 'delete' &&
    (poolRefs(c.desired).some((n) => s.inflight.has(`pool/${n}`)) ||
      certificateRefs(c.desired).some((n) => s.inflight.has(`certificate/${n}`)))
  )
    return { gate: 'dependsOnInflight' };
  if (c.kind === 'virtualService' && c.op !== 'delete' && s.heldParked?.size) {
    const held = s.heldParked;
    if (
      poolRefs(c.desired).some((n) => held.has(`pool/${n}`)) ||
      certificateRefs(c.desired).some((n) => held.has(`certificate/${n}`))
    )
      return { gate: 'dependsOnParked' };
  }
  const parked = s.parked.get(k);
  if (parked !== undefined && isDeepStrictEqual(parked, wantedOf(c))) return { gate: 'parked' };
  if (c.kind === 'pool' && c.op === 'update') {
    const wait = (s.poolWrites.get(c.name) ?? -Infinity) + s.poolIntervalMs - s.now;
    if (wait > 0) return { gate: 'poolInterval', waitMs: wait };
  }
  return { gate: 'go', unpark: parked !== undefined };
}

export interface Gated {
  go: Change[];
  /** Objects (kind/name) that still differ from the device after this pass. */
  held: Set<string>;
  /** Parked objects whose desired state changed: tried again, no longer parked. */
  unpark: string[];
  /** Whether something waits for an object in flight (a pass should run once it is released). */
  waitsOnFlight: boolean;
  /** The soonest a held pool update may go (ms), when one waits for its interval. */
  deferredMs: number | undefined;
}

export function gateChanges(changes: readonly Change[], s: GateState): Gated {
  const out: Gated = { go: [], held: new Set(), unpark: [], waitsOnFlight: false, deferredMs: undefined };
  // Pools and certificates come before the virtual services that use them in a plan.
  const heldParked = new Set<string>();
  for (const c of changes) {
    const v = gate(c, { ...s, heldParked });
    if (v.gate === 'parked' && c.kind !== 'virtualService') heldParked.add(objectKey(c));
    if (v.gate === 'go') {
      out.go.push(c);
      if (v.unpark) out.unpark.push(objectKey(c));
      continue;
    }
    out.held.add(objectKey(c));
    if (v.gate === 'inflight' || v.gate === 'dependsOnInflight') out.waitsOnFlight = true;
    if (v.gate === 'poolInterval') out.deferredMs = Math.min(out.deferredMs ?? v.waitMs, v.waitMs);
  }
  return out;
}
