/**
 * The HAProxy adapter's `dataplane` transport: the HAProxy Data Plane API (v2 or v3). Each apply
 * is one transaction, started on the configuration version just read and committed at the end;
 * a 409 (stale version) or 406 (outdated transaction) drops what we knew, and the changes fail
 * as retryable so the controller's queue re-reads and tries again. A change the API refuses
 * (400/422) fails alone: the transaction is rebuilt without it. When the commit reloads HAProxy
 * (202 + Reload-ID), apply waits for the reload to succeed. Pools are backends of server slots
 * (see layout.ts), so scaling is runtime changes only.
 */
import { isDeepStrictEqual } from 'node:util';
import PQueue from 'p-queue';
import { ALL_HTTP } from '../../../src/adapter/http-capabilities.ts';
import { AdapterError, isTerminalCode } from '../../../src/adapter/errors.ts';
import type {
  ApplyResult,
  Capabilities,
  LoadBalancerAdapter,
  MemberHealth,
} from '../../../src/adapter/contract.ts';
import type { Certificate, Pool, VirtualService } from '../../../src/model/types.ts';
import { normalizeVirtualService } from '../../../src/model/normalize.ts';
import type { Change as AnyChange, CoreChange as Change, Observed } from '../../../src/adapter/changes.ts';
import { applyAround, CertStore, withoutExtraCertificates } from '../cert-store.ts';
import { DpCertificates } from './certificates.ts';
import { codeForStatus } from '../../../src/adapter/errors.ts';
import { checkStatusName } from '../server-state.ts';
import { changeProblem, dependencyProblem, type Fail, httpPools } from '../validate.ts';
import { DataplaneClient, type DataplaneClientOptions, DataplaneError } from './client.ts';
import {
  assignSlots,
  backendChanged,
  backendFor,
  type DeviceBackend,
  type LayoutOptions,
  memberKey,
  ownerOf,
  readPool,
  serverChanged,
} from './layout.ts';
import { type DeviceFrontend, frontendFor, readVirtualService } from './frontend-layout.ts';

export interface HaproxyDataplaneOptions extends DataplaneClientOptions {
  owner: string;
  /** Server slots per step (a backend holds a multiple of this many servers). */
  slots: number;
  healthChecks: boolean;
  transparentBinds: boolean;
  /** How long to wait for a reload to succeed (default 30 s). */
  reloadTimeoutMs?: number;
  /** Returns an error to fail one change with, for tests of partial failure. */
  fault?: (change: Change) => Fail | undefined;
}

interface Op {
  /** The change this operation belongs to (-1: several or none). */
  index: number;
  run: (tx: string) => Promise<void>;
}

interface Built {
  /** Before the transaction: crt-list files, and certificates frontends gain or lose at runtime. */
  pre: Op[];
  ops: Op[];
  /** After the commit: crt-lists no frontend binds any more. */
  post: Op[];
  backends: Map<string, DeviceBackend | undefined>;
  frontends: Map<string, DeviceFrontend | undefined>;
}

export class HaproxyDataplaneAdapter implements LoadBalancerAdapter {
  readonly name = 'haproxy';
  readonly owner: string;
  readonly stats = { transactions: 0, reloads: 0, conflicts: 0 };
  private readonly client: DataplaneClient;
  private readonly layout: LayoutOptions;
  private backends = new Map<string, DeviceBackend>();
  private frontends = new Map<string, DeviceFrontend>();
  private foreign: Observed['foreign'] = [];
  private loaded = false;
  /** Applies run one at a time. */
  private chain: Promise<unknown> = Promise.resolve();
  private readonly certs: DpCertificates;
  private certificates = new Map<string, Certificate>();

  constructor(private readonly opts: HaproxyDataplaneOptions) {
    this.owner = opts.owner;
    this.client = new DataplaneClient(opts);
    this.certs = new DpCertificates(this.client, opts.owner, (id) => this.awaitReload(id));
    this.layout = {
      owner: opts.owner,
      apiVersion: opts.apiVersion,
      slots: opts.slots,
      healthChecks: opts.healthChecks,
      transparentBinds: opts.transparentBinds,
    };
  }

  /** Requests sent so far (for tests and benchmarks). */
  get calls(): { calls: number; writes: number } {
    return { ...this.client.stats };
  }

  capabilities(): Capabilities {
    return {
      l4: { tcp: true, udp: false },
      l7: true,
      memberNodeTag: true,
      drainingMembers: true,
      // Gateway API routes, every feature of the model (route-layout.ts), TLS passthrough, and
      // certificates in the API's storage (certificates.ts).
      http: ALL_HTTP,
      tlsPassthrough: true,
      certificates: true,
    };
  }

  async verify(): Promise<void> {
    await this.client.configVersion();
  }

  async observe(): Promise<Observed> {
    const [backends, frontends, certs] = await Promise.all([
      this.client.backends(),
      this.client.frontends(),
      this.certs.observe(),
    ]);
    const foreign: Observed['foreign'] = [...certs.foreign];
    const q = new PQueue({ concurrency: 8 });
    const ownBackends = new Map<string, DeviceBackend>();
    const ownFrontends = new Map<string, DeviceFrontend>();
    const reads: Promise<unknown>[] = [];
    for (const b of backends) {
      const owner = ownerOf(b);
      if (owner !== this.owner) foreign.push({ kind: 'pool', name: b.name, owner });
      else
        reads.push(
          q.add(
            async () =>
              void ownBackends.set(b.name, {
                backend: b,
                servers: await this.client.servers(b.name),
                // What we applied is remembered across re-reads (v2 servers carry no metadata).
                ...(this.backends.get(b.name)?.known ? { known: this.backends.get(b.name)!.known! } : {}),
              }),
          ),
        );
    }
    for (const f of frontends) {
      const owner = ownerOf(f);
      if (owner !== this.owner) foreign.push({ kind: 'virtualService', name: f.name, owner });
      else
        reads.push(
          q.add(async () => {
            const https = /\bprotocol=HTTPS\b/.test(f.description ?? '');
            ownFrontends.set(f.name, {
              frontend: f,
              binds: await this.client.binds(f.name),
              ...(https ? { certificates: await this.certs.crtListCertificates(f.name) } : {}),
            });
          }),
        );
    }
    await Promise.all(reads);
    this.backends = ownBackends;
    this.frontends = ownFrontends;
    this.foreign = foreign;
    this.certificates = new Map(certs.owned.map((c) => [c.name, c]));
    this.loaded = true;
    return this.observed();
  }

  private observed(): Observed {
    return {
      owned: {
        pools: [...this.backends.values()].map(readPool),
        virtualServices: [...this.frontends.values()].map(readVirtualService),
        certificates: [...this.certificates.values()],
      },
      foreign: this.foreign,
    };
  }

  apply(changes: AnyChange[]): Promise<ApplyResult[]> {
    const run = this.chain.then(() =>
      applyAround(
        changes,
        (c) => this.applyCertificate(c),
        (core) => this.applyNow(core),
      ),
    );
    this.chain = run.catch(() => undefined);
    return run;
  }

  /**
   * A certificate change, alone: checked as HAProxy would before it is sent (a certificate it
   * refuses fails with its reason and nothing else); a deleted one goes unless a frontend of ours
   * still serves it.
   */
  private async applyCertificate(c: Extract<AnyChange, { kind: 'certificate' }>): Promise<ApplyResult> {
    const fail = (code: AdapterError['code'], message: string): ApplyResult => ({
      change: c,
      ok: false,
      error: { code, message, terminal: isTerminalCode(code) },
    });
    try {
      if (!this.loaded) await this.observe();
      if (c.op === 'delete') {
        const user = [...this.frontends.values()].find((f) => f.certificates?.includes(c.name));
        if (user) return fail('InUse', `certificate ${c.name} is still served by ${user.frontend.name}`);
        await this.certs.remove(c.name);
        this.certificates.delete(c.name);
        return { change: c, ok: true };
      }
      const problem = CertStore.problem(c.desired);
      if (problem) return fail('Invalid', problem);
      await this.certs.put(c.desired, this.certificates.has(c.name) || c.op === 'update');
      this.certificates.set(c.name, c.desired);
      return { change: c, ok: true };
    } catch (err) {
      if (err instanceof DataplaneError && (err.status === 400 || err.status === 422)) {
        return fail('Invalid', `certificate ${c.name}: HAProxy refused it: ${err.message}`);
      }
      this.loaded = false;
      return err instanceof AdapterError
        ? fail(err.code, err.message)
        : fail('Unavailable', `certificate ${c.name}: ${(err as Error).message}`);
    }
  }

  private async applyNow(changes: Change[]): Promise<ApplyResult[]> {
    const failed = new Map<number, Fail>();
    const result = () =>
      changes.map((change, i): ApplyResult => {
        const f = failed.get(i);
        return f ? { change, ok: false, error: f } : { change, ok: true };
      });
    const failRest = (error: Fail) => {
      changes.forEach((_, i) => {
        if (!failed.has(i)) failed.set(i, error);
      });
      this.loaded = false;
      return result();
    };
    try {
      if (!this.loaded) await this.observe();
    } catch (err) {
      return failRest({ code: 'Unavailable', message: (err as Error).message, terminal: false });
    }
    changes.forEach((c, i) => {
      const has = c.kind === 'pool' ? this.backends.has(c.name) : this.frontends.has(c.name);
      const p = this.opts.fault?.(c) ?? changeProblem(c, has, true);
      if (p) failed.set(i, p);
    });
    // A refused change is dropped and the transaction rebuilt without it, a bounded number of times.
    for (let attempt = 0; attempt <= changes.length; attempt++) {
      const built = this.build(changes, failed);
      if (built.pre.length + built.ops.length + built.post.length === 0) return result();
      let current: Op | undefined;
      let tx: string | undefined;
      try {
        for (const op of built.pre) {
          current = op;
          await op.run('');
        }
        if (built.ops.length > 0) {
          tx = await this.client.startTransaction(await this.client.configVersion());
          this.stats.transactions++;
          for (const op of built.ops) {
            current = op;
            await op.run(tx);
          }
          current = undefined;
          const commit = await this.client.commit(tx);
          tx = undefined;
          if (commit.reloadId) await this.awaitReload(commit.reloadId);
        }
        current = undefined;
        // A crt-list no frontend binds: left behind if its delete fails, harmless, gone next time.
        for (const op of built.post) await op.run('').catch(() => undefined);
      } catch (err) {
        if (tx) await this.client.abort(tx).catch(() => undefined);
        const status = err instanceof DataplaneError ? err.status : 0;
        const message = (err as Error).message;
        if (status === 409 || status === 406) {
          this.stats.conflicts++;
          return failRest({
            code: 'Conflict',
            message: `the configuration changed meanwhile (${message}); re-read and retried`,
            terminal: false,
          });
        }
        if (current && current.index >= 0 && (status === 400 || status === 422)) {
          failed.set(current.index, { code: 'Invalid', message, terminal: true });
          continue;
        }
        if (
          current &&
          current.index >= 0 &&
          err instanceof AdapterError &&
          !(err instanceof DataplaneError)
        ) {
          failed.set(current.index, { code: err.code, message, terminal: isTerminalCode(err.code) });
          continue;
        }
        return failRest({
          code: status === 0 ? 'Unavailable' : codeForStatus(status),
          message,
          terminal: false,
        });
      }
      for (const [name, d] of built.backends) {
        if (d) this.backends.set(name, d);
        else this.backends.delete(name);
      }
      for (const [name, d] of built.frontends) {
        if (d) this.frontends.set(name, d);
        else this.frontends.delete(name);
      }
      return result();
    }
    return failRest({ code: 'Unavailable', message: 'too many refused changes', terminal: false });
  }

  private async awaitReload(id: string): Promise<void> {
    this.stats.reloads++;
    const until = Date.now() + (this.opts.reloadTimeoutMs ?? 30_000);
    while (Date.now() < until) {
      const r = await this.client.reload(id);
      if (r.status === 'succeeded') return;
      if (r.status === 'failed') throw new DataplaneError(500, `reload ${id} failed: ${r.response ?? ''}`);
      await new Promise((res) => setTimeout(res, 50));
    }
    throw new DataplaneError(0, `reload ${id} did not finish in time`);
  }

  /** Whether an HTTPS frontend changes only in the certificates past its default. */
  private certificatesOnly(cur: DeviceFrontend, v: VirtualService): boolean {
    const was = readVirtualService(cur);
    return isDeepStrictEqual(
      normalizeVirtualService(withoutExtraCertificates(was)),
      normalizeVirtualService(withoutExtraCertificates(v)),
    );
  }

  /** The operations of one transaction for the changes not failed, and the device view after it. */
  private build(changes: Change[], failed: Map<number, Fail>): Built {
    const pools = new Map<string, Pool>(
      [...this.backends.values()].map((d) => [d.backend.name, readPool(d)]),
    );
    const vss = new Map<string, VirtualService>(
      [...this.frontends.values()].map((d) => [d.frontend.name, readVirtualService(d)]),
    );
    const poolChange = new Map<string, number>();
    const vsChange = new Map<string, number>();
    changes.forEach((c, i) => {
      if (failed.has(i)) return;
      if (c.kind === 'pool') {
        poolChange.set(c.name, i);
        if (c.op === 'delete') pools.delete(c.name);
        else pools.set(c.name, c.desired);
      }
    });
    changes.forEach((c, i) => {
      if (failed.has(i) || c.kind !== 'virtualService') return;
      if (c.op !== 'delete') {
        const dep = dependencyProblem(c.desired, pools);
        if (dep) return void failed.set(i, dep);
      }
      vsChange.set(c.name, i);
      if (c.op === 'delete') vss.delete(c.name);
      else vss.set(c.name, c.desired);
    });
    const http = httpPools(vss.values());
    const before = httpPools([...this.frontends.values()].map(readVirtualService));
    const ops = {
      frontendDeletes: [] as Op[],
      backends: [] as Op[],
      frontends: [] as Op[],
      backendDeletes: [] as Op[],
    };
    const out: Built = { pre: [], ops: [], post: [], backends: new Map(), frontends: new Map() };
    const touched = new Set([...poolChange.keys(), ...[...http].filter((p) => !before.has(p))]);
    for (const p of before) if (!http.has(p)) touched.add(p);
    for (const name of touched) {
      const index = poolChange.get(name) ?? -1;
      const pool = pools.get(name);
      const cur = this.backends.get(name);
      if (!pool) {
        if (cur) ops.backendDeletes.push({ index, run: (tx) => this.client.deleteBackend(tx, name) });
        out.backends.set(name, undefined);
        continue;
      }
      const wanted = backendFor(pool, http.has(name), this.layout);
      const slots = assignSlots(cur?.servers ?? [], pool.members, this.layout);
      const writeBackend =
        !cur || backendChanged(cur.backend, wanted) || (slots.grown && this.layout.apiVersion === 'v2');
      if (writeBackend)
        ops.backends.push({ index, run: (tx) => this.client.putBackend(tx, wanted, cur !== undefined) });
      const old = new Map((cur?.servers ?? []).map((s) => [s.name, s]));
      for (const s of slots.servers) {
        const was = old.get(s.name);
        if (!was || serverChanged(was, s)) {
          ops.backends.push({ index, run: (tx) => this.client.putServer(tx, name, s, was !== undefined) });
        }
      }
      out.backends.set(name, {
        backend: writeBackend ? wanted : cur!.backend,
        servers: slots.servers,
        known: new Map(pool.members.map((m) => [memberKey(m), { node: m.node, pod: m.pod }])),
      });
    }
    for (const [name, index] of vsChange) {
      const v = vss.get(name);
      const cur = this.frontends.get(name);
      const wasHttps = cur?.certificates !== undefined;
      if (!v) {
        if (cur) ops.frontendDeletes.push({ index, run: (tx) => this.client.deleteFrontend(tx, name) });
        if (wasHttps) out.post.push({ index: -1, run: () => this.certs.removeCrtList(name) });
        out.frontends.set(name, undefined);
        continue;
      }
      const https = v.kind === 'l7' && v.protocol === 'HTTPS';
      const certificates = v.kind === 'l7' ? (v.certificates ?? []) : [];
      if (https && cur && wasHttps && this.certificatesOnly(cur, v)) {
        // The default certificate stays: the crt-list changes, the configuration does not.
        out.pre.push({
          index,
          run: async () => {
            await this.certs.changeCrtList(name, cur.certificates ?? [], certificates);
            this.frontends.set(name, { ...cur, certificates });
          },
        });
        continue;
      }
      let crtList: string | undefined;
      if (https)
        out.pre.push({
          index,
          run: async () => void (crtList = await this.certs.writeCrtList(name, certificates)),
        });
      if (wasHttps && !https) out.post.push({ index: -1, run: () => this.certs.removeCrtList(name) });
      ops.frontends.push({
        index,
        run: async (tx) => {
          const f = frontendFor(v, this.layout, crtList);
          await this.client.putFrontend(tx, f.frontend, cur !== undefined);
          const binds = new Map((cur?.binds ?? []).map((b) => [b.name, b]));
          for (const b of f.binds) {
            const was = binds.get(b.name);
            if (!was || JSON.stringify(was) !== JSON.stringify(b))
              await this.client.putBind(tx, name, b, !!was);
            binds.delete(b.name);
          }
          for (const stale of binds.keys()) await this.client.deleteBind(tx, name, stale);
          const lists = [
            ['acls', f.acls],
            ['backend_switching_rules', f.rules],
            ['http_request_rules', f.httpRequest],
            ['http_response_rules', f.httpResponse],
            ['tcp_request_rules', f.tcpRequest],
          ] as const;
          for (const [kind, items] of lists) {
            if (cur || items.length > 0) await this.client.setList(kind, tx, name, items);
          }
          out.frontends.set(name, {
            frontend: f.frontend,
            binds: f.binds,
            ...(https ? { certificates } : {}),
          });
        },
      });
    }
    out.ops = [...ops.frontendDeletes, ...ops.backends, ...ops.frontends, ...ops.backendDeletes];
    return out;
  }

  /**
   * Each member of our backends as HAProxy's checks see it, from the runtime servers endpoint. v3
   * says whether a check is configured (`check_state`); v2 does not, so there an unchecked server
   * reads `up`.
   */
  async health(): Promise<MemberHealth[]> {
    const backends = (await this.client.backends()).filter((b) => ownerOf(b) === this.owner);
    const q = new PQueue({ concurrency: 8 });
    const lists = await Promise.all(
      backends.map((b) =>
        q.add(async () => ({ pool: b.name, servers: await this.client.runtimeServers(b.name) })),
      ),
    );
    return lists.flatMap(({ pool, servers }) =>
      servers.flatMap((s): MemberHealth[] => {
        if (!s.address || !s.port) return [];
        const checked = s.check_state == null || (s.check_state & 0x02) !== 0;
        return [
          {
            pool,
            address: s.address,
            port: s.port,
            admin:
              s.admin_state === 'maint'
                ? 'maint'
                : s.admin_state === 'drain' || s.iweight === 0
                  ? 'draining'
                  : 'enabled',
            health: s.operational_state === 'down' ? 'down' : checked ? 'up' : 'unchecked',
            ...(s.check_status != null && checked ? { reason: checkStatusName(s.check_status) } : {}),
          },
        ];
      }),
    );
  }

  async close(): Promise<void> {
    await this.chain;
    await this.client.close();
  }
}
