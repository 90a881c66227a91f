/**
 * What the controller last applied, for GET /api/v1/state: every virtual service, pool and member
 * with the last apply result. The document's shape is a stable API (docs/state-api.md).
 */
import type { ApplyError, ApplyResult, MemberHealth } from '../adapter/contract.ts';
import { once, resolveVip } from '../model/vips.ts';
import type { Certificate, LbState } from '../model/types.ts';
import type { Conflict } from '../plan/diff.ts';
import { type HistoryEntry, MemberHistory } from './member-history.ts';

export interface ObjectResult {
  ok: boolean;
  op: string;
  at: string;
  error?: ApplyError;
}

/** Which replica writes: `single` without leader election. */
export interface Leadership {
  role: 'leader' | 'standby' | 'single';
  /** This replica. */
  identity: string;
  /** The Lease's holder ('' when none, or without leader election). */
  holder: string;
  /** When the holder acquired the Lease (ISO time). */
  since: string | null;
}

/** A member's state on the device, apart from our intent (`enabled`): read by the health monitor. */
export interface MemberHealthView {
  state: MemberHealth['health'];
  /** The device's admin state (enabled, draining, or maintenance set there by hand). */
  admin: MemberHealth['admin'];
  reason?: string;
  /** When it was read. */
  at: string;
}

/** The last read of health from the device. */
export interface HealthRead {
  /** false: the adapter cannot report health. */
  supported: boolean;
  at: string | null;
  /** Why the last read failed (the previous states are kept). */
  error: string | null;
}

/** A gated Pod's readiness gate (npl-lb.io/load-balancer-ready) as the Pod has it. */
export interface GateView {
  status: string;
  reason?: string;
}

type StateMember = LbState['pools'][number]['members'][number] & {
  health: MemberHealthView | null;
  /** The member Pod's readiness gate; absent when the Pod lists none. */
  gate?: GateView;
  /** Its last hour (health changes, changes applied), oldest first; absent when nothing happened. */
  history?: HistoryEntry[];
};

const history = (entries: HistoryEntry[]) => (entries.length > 0 ? { history: entries } : {});

export interface StateDocument {
  apiVersion: 'npl-lb.io/v1';
  kind: 'LoadBalancerState';
  clusterName: string;
  adapter: string;
  generatedAt: string;
  lastSync: { at: string; changes: number; failed: number } | null;
  /** A standby serves an empty state: this says why, and who leads. */
  leadership: Leadership;
  virtualServices: (WithoutCertificates<LbState['virtualServices'][number]> & {
    /** What the listener serves, read from the certificates (never a key). */
    certificates?: CertificateView[];
    lastApply: ObjectResult | null;
  })[];
  /** Every certificate we hold, without its key. */
  certificates: (CertificateView & { source: string; lastApply: ObjectResult | null })[];
  pools: (Omit<LbState['pools'][number], 'members'> & {
    members: StateMember[];
    lastApply: ObjectResult | null;
  })[];
  conflicts: Conflict[];
  health: HealthRead;
  /** Whether the load balancer answers (writes are held while it does not). */
  device: DeviceView;
}

export interface DeviceView {
  reachable: boolean;
  /** Since when (ISO 8601). */
  since: string | null;
  /** Why it is taken as unreachable. */
  error: string | null;
  /** Reads made to see whether it answers, since start. */
  probes: number;
}

/** A virtual service with its certificate names taken out (the document shows views of them instead). */
type WithoutCertificates<T> = T extends unknown ? Omit<T, 'certificates'> : never;

/** A certificate as the state document shows it: never the key, nor the PEM. */
export interface CertificateView {
  name: string;
  subject: string;
  sans: string[];
  notAfter: string;
  fingerprint: string;
}

const certificateView = (c: Certificate): CertificateView => ({
  name: c.name,
  subject: c.subject,
  sans: c.sniNames,
  notAfter: c.notAfter,
  fingerprint: c.fingerprint,
});

export class StateTracker {
  /** Each member's last hour: health changes and the changes applied to it (member-history.ts). */
  readonly history: MemberHistory;
  /** Each member's admin and health as last read, to tell a change from a repeat. */
  private lastHealth = new Map<string, string>();
  private desired: LbState = { pools: [], virtualServices: [] };
  private readonly results = new Map<string, ObjectResult>();
  private conflicts: Conflict[] = [];
  private lastSync: StateDocument['lastSync'] = null;
  private leadership: () => Leadership = () => ({ role: 'single', identity: '', holder: '', since: null });
  private readonly memberHealth = new Map<string, MemberHealthView>();
  /** The keys of memberHealth by pool, so a slice's read replaces its pools without a walk of all. */
  private readonly healthKeysOf = new Map<string, Set<string>>();
  private healthRead: HealthRead = { supported: false, at: null, error: null };
  private device: () => DeviceView = () => ({ reachable: true, since: null, error: null, probes: 0 });
  private readonly listeners = new Set<() => void>();

  /** Calls `fn` after every recorded pass or health read; returns the unsubscribe. */
  onChange(fn: () => void): () => void {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }

  private changed(): void {
    for (const fn of this.listeners) fn();
  }

  /** The device's view of the members, as the health monitor last read it. */
  setHealth(list: MemberHealth[], startedAt?: number): void {
    const at = this.now().toISOString();
    this.healthStartedAt = startedAt ?? Date.parse(at);
    this.memberHealth.clear();
    this.healthKeysOf.clear();
    // A whole read: members no longer read are forgotten here (their history stays its hour).
    const read = new Set(list.map((h) => `${h.pool}|${h.address}|${h.port}`));
    for (const key of this.lastHealth.keys()) if (!read.has(key)) this.lastHealth.delete(key);
    this.putHealth(list, at);
  }

  /**
   * A read of some pools alone (the timer's slice): their members' states replaced, every other
   * pool's kept. The time of the last whole read (healthReadAt) is not moved.
   */
  setHealthOf(pools: readonly string[], list: MemberHealth[]): void {
    const at = this.now().toISOString();
    for (const pool of pools) {
      for (const key of this.healthKeysOf.get(pool) ?? []) this.memberHealth.delete(key);
      this.healthKeysOf.delete(pool);
    }
    this.putHealth(list, at);
  }

  /** Members' states as read at `at`, recorded and told. */
  private putHealth(list: MemberHealth[], at: string): void {
    for (const h of list) {
      const key = `${h.pool}|${h.address}|${h.port}`;
      // A spare server in maintenance may still carry a departed member's address (Data Plane API
      // slots): the server that serves the member wins.
      if (h.admin === 'maint' && this.memberHealth.get(key)?.at === at) continue;
      const seen = `${h.admin}/${h.health}`;
      const before = this.lastHealth.get(key);
      if (before !== undefined && before !== seen) {
        const [admin, health] = before.split('/');
        this.history.record(
          key,
          health !== h.health
            ? `health ${health} → ${h.health}${h.reason && h.health === 'down' ? ` (${h.reason})` : ''}`
            : `on the device ${admin} → ${h.admin}`,
        );
      }
      this.lastHealth.set(key, seen);
      let keys = this.healthKeysOf.get(h.pool);
      if (!keys) this.healthKeysOf.set(h.pool, (keys = new Set()));
      keys.add(key);
      this.memberHealth.set(key, {
        state: h.health,
        admin: h.admin,
        ...(h.reason ? { reason: h.reason } : {}),
        at,
      });
    }
    this.healthRead = { supported: true, at, error: null };
    this.changed();
  }

  /** When the last health read from the device started (ms), undefined before the first one. */
  healthReadAt(): number | undefined {
    return this.healthStartedAt;
  }
  private healthStartedAt: number | undefined;

  /** One member's health as the device last reported it; undefined when not read (yet). */
  memberHealthOf(pool: string, address: string, port: number): MemberHealth['health'] | undefined {
    return this.memberHealth.get(`${pool}|${address}|${port}`)?.state;
  }

  /** A failed read: the states read before stay, with the error beside them. */
  setHealthError(message: string): void {
    this.healthRead = { ...this.healthRead, supported: true, error: message };
    this.changed();
  }

  /** Where the members' readiness gates come from (the controller's Pods), read once per document. */
  setGates(source: () => ReadonlyMap<string, GateView>): void {
    this.gates = source;
  }
  private gates: () => ReadonlyMap<string, GateView> = () => new Map();

  /** Where the document's device reachability comes from (the controller's circuit breaker). */
  setDevice(source: () => DeviceView): void {
    this.device = source;
  }

  /** Where the document's leadership comes from (the leader elector, when there is one). */
  setLeadership(source: () => Leadership): void {
    this.leadership = source;
  }

  /** Where the device allocates VIPs: the address each group got (shown for `auto:` VIPs). */
  private allocatedVips: () => ReadonlyMap<string, string> | undefined = () => undefined;

  setAllocatedVips(source: () => ReadonlyMap<string, string>): void {
    this.allocatedVips = source;
  }

  constructor(
    private readonly clusterName: string,
    private readonly adapter: string,
    private readonly now: () => Date = () => new Date(),
  ) {
    this.history = new MemberHistory({}, () => this.now().getTime());
  }

  /**
   * Records a pass. `pending` names the objects (kind/name) that still differ from the device; a
   * failure of an object that is not pending and had no change this pass is over (the device
   * already matches): it is cleared and returned, so its Service or Ingress can go live again.
   */
  record(
    desired: LbState,
    results: ApplyResult[],
    conflicts: Conflict[],
    pending: ReadonlySet<string> = new Set(),
  ): string[] {
    this.recordMembers(results);
    this.desired = desired;
    this.conflicts = conflicts;
    const at = this.now().toISOString();
    const touched = new Set<string>();
    for (const r of results) {
      const key = `${r.change.kind}/${r.change.name}`;
      touched.add(key);
      const had = this.failures.has(key);
      if (r.ok) this.failures.delete(key);
      else this.failures.add(key);
      // A new error on a failed object counts too: its status reason may change.
      if (had !== this.failures.has(key) || !r.ok) this.failureVersion++;
      this.results.set(key, {
        ok: r.ok,
        op: r.change.op,
        at,
        ...(r.error ? { error: r.error } : {}),
      });
    }
    const cleared: string[] = [];
    for (const key of [...this.failures]) {
      if (touched.has(key) || pending.has(key)) continue;
      this.failures.delete(key);
      this.failureVersion++;
      cleared.push(key);
      const last = this.results.get(key);
      if (last) this.results.set(key, { ok: true, op: 'observed', at });
    }
    this.lastSync = { at, changes: results.length, failed: results.filter((r) => !r.ok).length };
    this.changed();
    return cleared;
  }

  /**
   * The members a pass's pool changes added, drained, enabled or removed, as applied: each change's
   * device state before (`observed`) against what was written (`desired`).
   */
  private recordMembers(results: ApplyResult[]): void {
    const state = (enabled: boolean) => (enabled ? 'enabled' : 'draining');
    for (const r of results) {
      if (!r.ok || r.change.kind !== 'pool') continue;
      const c = r.change;
      const name = c.name;
      const old = new Map(
        (c.op === 'create' ? [] : c.observed.members).map((m) => [`${m.address}|${m.port}`, m]),
      );
      for (const m of c.op === 'delete' ? [] : c.desired.members) {
        const id = `${m.address}|${m.port}`;
        const prev = old.get(id);
        old.delete(id);
        if (!prev) this.history.record(`${name}|${id}`, `added (${state(m.enabled)})`);
        else if (prev.enabled !== m.enabled)
          this.history.record(`${name}|${id}`, `${state(prev.enabled)} → ${state(m.enabled)}`);
      }
      for (const id of old.keys()) this.history.record(`${name}|${id}`, 'removed');
    }
  }

  /** Objects whose last apply failed (few, so `failed()` is cheap for the many that did not). */
  private readonly failures = new Set<string>();
  /** Changes whenever an object starts or stops failing (status writers cache by it). */
  failureVersion = 0;

  /** The error of an object whose last apply failed. */
  failure(kind: string, name: string): ObjectResult['error'] | undefined {
    if (!this.failed(kind, name)) return undefined;
    return this.results.get(`${kind}/${name}`)?.error;
  }

  failed(kind: string, name: string): boolean {
    return this.failures.size > 0 && this.failures.has(`${kind}/${name}`);
  }

  document(): StateDocument {
    const allocated = once(this.allocatedVips);
    const certByName = new Map((this.desired.certificates ?? []).map((c) => [c.name, c]));
    let gates: ReadonlyMap<string, GateView> | undefined;
    return {
      apiVersion: 'npl-lb.io/v1',
      kind: 'LoadBalancerState',
      clusterName: this.clusterName,
      adapter: this.adapter,
      generatedAt: this.now().toISOString(),
      lastSync: this.lastSync,
      leadership: this.leadership(),
      virtualServices: this.desired.virtualServices.map((v) => {
        // An allocated VIP shows its address once the device gave one, `auto:<group>` until then.
        const vip = resolveVip(v.vip, allocated) ?? v.vip;
        const certs = v.kind === 'l7' ? v.certificates : undefined;
        const { certificates: _names, ...rest } = v.kind === 'l7' ? v : { ...v, certificates: undefined };
        return {
          ...rest,
          vip,
          ...(certs
            ? {
                certificates: certs
                  .map((n) => certByName.get(n))
                  .filter((c): c is Certificate => c !== undefined)
                  .map(certificateView),
              }
            : {}),
          lastApply: this.results.get(`virtualService/${v.name}`) ?? null,
        };
      }),
      certificates: [...certByName.values()].map((c) => ({
        ...certificateView(c),
        source: c.source,
        lastApply: this.results.get(`certificate/${c.name}`) ?? null,
      })),
      pools: this.desired.pools.map((p) => ({
        ...p,
        members: p.members.map((m) => {
          const gate = m.pod ? (gates ??= this.gates()).get(m.pod) : undefined;
          return {
            ...m,
            health: this.memberHealth.get(`${p.name}|${m.address}|${m.port}`) ?? null,
            ...(gate ? { gate } : {}),
            ...history(this.history.of(`${p.name}|${m.address}|${m.port}`)),
          };
        }),
        lastApply: this.results.get(`pool/${p.name}`) ?? null,
      })),
      conflicts: this.conflicts,
      health: this.healthRead,
      device: this.device(),
    };
  }
}
