/**
 * The HAProxy adapter's `dataplane` transport: the HAProxy Data Plane API (v2 or v3). Each apply
 * is one transaction, started on the configuration version just read and committed at the end;
 * a 409 (stale version) or 406 (outdated transaction) drops what we knew, and the changes fail
 * as retryable so the controller's queue re-reads and tries again. A change the API refuses
 * (400/422) fails alone: the transaction is rebuilt without it. A commit HAProxy's configuration
 * check refuses is narrowed by bisection to the change that breaks it (ConfigInvalid), and the
 * others commit (narrowRefusedCommit). When the commit reloads HAProxy
 * (202 + Reload-ID), apply waits for the reload to succeed. Pools are backends of server slots
 * (see layout.ts), so scaling is runtime changes only.
 */
import PQueue from 'p-queue';
import { DATAPLANE_CAPABILITIES } from '../capabilities.ts';
import type {
  ApplyResult,
  Capabilities,
  LoadBalancerAdapter,
  MemberHealth,
} from '../../../src/adapter/contract.ts';
import type { Certificate } from '../../../src/model/types.ts';
import type { Change as AnyChange, CoreChange as Change, Observed } from '../../../src/adapter/changes.ts';
import { applyAround, CertStore } from '../cert-store.ts';
import { DpCertificates } from './certificates.ts';
import { DpCaFiles } from './ca-files.ts';
import { bundlesOf, desiredOf } from '../ca-files.ts';
import { AdapterError, isTerminalCode } from '../../../src/adapter/errors.ts';
import { buildOps, type Op } from './transaction-plan.ts';
import { attemptFailure } from './attempt-failure.ts';
import { narrowRefusedCommit, type TxOutcome } from './commit-narrowing.ts';
import { changeProblem, type Fail } from '../validate.ts';
import { FailClosed } from '../fail-closed.ts';
import { awaitReload, DataplaneClient, type DataplaneClientOptions, DataplaneError } from './client.ts';
import { type DeviceBackend, type LayoutOptions, ownerOf, readPoolExact } from './layout.ts';
import { type DeviceFrontend, readVirtualService } from './frontend-layout.ts';
import { membersHealth } from './member-health.ts';
import type { DpBind, DpFrontend } from './models.ts';
import { attachLoops, loopOf } from './tls-loop.ts';
import { attachMirrors, mirrorOf, type MirrorSection } from './mirror-layout.ts';
import { mirrorScriptLoaded } from './mirror-ops.ts';

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

/** How one transaction ended (see transact). */

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
  private readonly cas: DpCaFiles;
  private readonly failClosed = new FailClosed();
  private certificates = new Map<string, Certificate>();

  constructor(private readonly opts: HaproxyDataplaneOptions) {
    this.owner = opts.owner;
    this.client = new DataplaneClient(opts);
    this.certs = new DpCertificates(this.client, opts.owner, (id) => this.awaitReload(id));
    this.cas = new DpCaFiles(this.certs);
    this.layout = {
      caPath: (ca) => this.cas.path(ca),
      certPath: (name) => this.certs.certPath(name),
      owner: opts.owner,
      instance: opts.url,
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
    return DATAPLANE_CAPABILITIES;
  }

  async verify(): Promise<void> {
    await this.client.configVersion();
  }

  /** The Data Plane API answers (one small read). */
  async probe(): Promise<void> {
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
    // Mixed mode's loop sections, by the virtual service they are part of (tls-loop.ts).
    const loopBackends = new Map<string, DeviceBackend>();
    const loopFrontends = new Map<string, { frontend: DpFrontend; binds: DpBind[] }>();
    const reads: Promise<unknown>[] = [];
    for (const b of backends) {
      const owner = ownerOf(b);
      const partOf = loopOf(b.description);
      if (owner !== this.owner) foreign.push({ kind: 'pool', name: b.name, owner });
      else
        reads.push(
          q.add(async () => {
            const servers = await this.client.servers(b.name);
            if (partOf !== undefined) return void loopBackends.set(partOf, { backend: b, servers });
            ownBackends.set(b.name, {
              backend: b,
              servers,
              // What we applied is remembered across re-reads (v2 servers carry no metadata).
              ...(this.backends.get(b.name)?.known ? { known: this.backends.get(b.name)!.known! } : {}),
            });
          }),
        );
    }
    // Request mirrors' frontends (mirror-layout.ts), attached to their virtual services below.
    const mirrors: MirrorSection[] = [];
    for (const f of frontends) {
      const owner = ownerOf(f);
      const partOf = loopOf(f.description);
      if (owner !== this.owner) foreign.push({ kind: 'virtualService', name: f.name, owner });
      else if (mirrorOf(f.description))
        reads.push(
          q.add(async () => void mirrors.push({ frontend: f, binds: await this.client.binds(f.name) })),
        );
      else if (partOf !== undefined)
        reads.push(
          q.add(
            async () =>
              void loopFrontends.set(partOf, { frontend: f, binds: await this.client.binds(f.name) }),
          ),
        );
      else
        reads.push(
          q.add(async () => {
            // A frontend terminating TLS (HTTPS, or TLS in Terminate mode) has a crt-list.
            const https = /\bprotocol=HTTPS\b|\btls=terminate\b/.test(f.description ?? '');
            const list = https ? await this.certs.crtListRead(f.name) : undefined;
            ownFrontends.set(f.name, {
              frontend: f,
              binds: await this.client.binds(f.name),
              ...(list ? { certificates: list.certificates } : {}),
              ...(list?.asking ? { hostClientValidation: list.asking } : {}),
            });
          }),
        );
    }
    await Promise.all(reads);
    attachLoops(ownBackends, ownFrontends, loopBackends, loopFrontends);
    attachMirrors(
      ownFrontends,
      mirrors,
      this.layout.instance ?? '',
      mirrors.length > 0 && (await mirrorScriptLoaded(this.client, this.certs)),
    );
    await this.cas.observe();
    this.backends = ownBackends;
    this.frontends = ownFrontends;
    this.foreign = foreign;
    this.certificates = new Map(certs.owned.map((c) => [c.name, c]));
    this.loaded = true;
    return this.observed();
  }

  private observed(): Observed {
    // A TLS pool's CA read as the content of the file its servers (or our note) name.
    const read = [...this.backends.values()]
      .map(readPoolExact)
      .map((r) => ({ ...r, pool: this.cas.readPool(r.pool) }));
    const drifted = read.filter((r) => !r.exact).map((r) => ({ kind: 'pool' as const, name: r.pool.name }));
    return {
      owned: {
        pools: read.map((r) => r.pool),
        // A bind's client CA read as the content of the file it names.
        virtualServices: [...this.frontends.values()].map((d) =>
          this.cas.readVirtualService(readVirtualService(d)),
        ),
        certificates: [...this.certificates.values()],
      },
      foreign: this.foreign,
      ...(drifted.length > 0 ? { drifted } : {}),
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
        const pool = [...this.backends.values()]
          .map((b) => readPoolExact(b).pool)
          .find((p) => p.backendTls?.clientCertificate?.endsWith(`/${c.name}.pem`));
        if (pool) return fail('InUse', `certificate ${c.name} is still presented by pool ${pool.name}`);
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

  /** The batch; then, where a refused change leaves a wider client filter serving, its frontend down. */
  private applyNow(changes: Change[]): Promise<ApplyResult[]> {
    return this.failClosed.apply(
      changes,
      (c) => this.applyBatch(c),
      (name) => {
        const f = this.frontends.get(name);
        return f ? readVirtualService(f) : undefined;
      },
    );
  }

  private async applyBatch(changes: Change[]): Promise<ApplyResult[]> {
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
      const p = this.opts.fault?.(c) ?? changeProblem(c, has, true, DATAPLANE_CAPABILITIES);
      if (p) failed.set(i, p);
    });
    // The CA bundles of TLS pools and client-validating binds, stored before the transaction
    // whose servers and binds name them.
    try {
      await this.cas.ensure(bundlesOf(...desiredOf(changes.filter((_, i) => !failed.has(i)))));
    } catch (err) {
      return failRest({ code: 'Unavailable', message: (err as Error).message, terminal: false });
    }
    const first = await this.transact(changes, failed);
    if (first.kind === 'fail') return failRest(first.error);
    if (first.kind === 'refused') {
      const rest = await narrowRefusedCommit(changes, failed, first.message, (c, f) => this.transact(c, f));
      if (rest) return failRest(rest);
    }
    // Bundles no backend of ours names any more: gone (left for the next batch if that fails).
    await this.cas
      .prune(
        bundlesOf(
          [...this.backends.values()].map((d) => readPoolExact(d).pool),
          [...this.frontends.values()].map(readVirtualService),
        ),
      )
      .catch(() => undefined);
    return result();
  }

  /**
   * One transaction of the changes not in `failed`: a change the API refuses (400/422) fails alone
   * and the transaction is rebuilt without it, a bounded number of times. `refused`: the commit
   * itself was refused (HAProxy's check of the whole file); `fail`: every change fails with it.
   */
  private async transact(changes: Change[], failed: Map<number, Fail>): Promise<TxOutcome> {
    for (let attempt = 0; attempt <= changes.length; attempt++) {
      const built = buildOps(
        {
          client: this.client,
          certs: this.certs,
          layout: this.layout,
          backends: this.backends,
          frontends: this.frontends,
        },
        changes,
        failed,
      );
      if (built.pre.length + built.ops.length + built.post.length === 0) return { kind: 'ok' };
      let current: Op | undefined;
      let tx: string | undefined;
      let committing = false;
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
          committing = true;
          const commit = await this.client.commit(tx);
          tx = undefined;
          committing = false;
          if (commit.reloadId) await this.awaitReload(commit.reloadId);
        }
        current = undefined;
        // A crt-list no frontend binds: left behind if its delete fails, harmless, gone next time.
        for (const op of built.post) await op.run('').catch(() => undefined);
      } catch (err) {
        if (tx) await this.client.abort(tx).catch(() => undefined);
        const f = attemptFailure(err, committing, current);
        if (f.kind === 'drop') {
          failed.set(f.index, f.fail);
          continue;
        }
        if (f.kind === 'refused') return f;
        if (f.kind === 'conflict') this.stats.conflicts++;
        this.loaded = false;
        return { kind: 'fail', error: f.error };
      }
      for (const [name, d] of built.backends) {
        if (d) this.backends.set(name, d);
        else this.backends.delete(name);
      }
      for (const [name, d] of built.frontends) {
        if (d) this.frontends.set(name, d);
        else this.frontends.delete(name);
      }
      return { kind: 'ok' };
    }
    this.loaded = false;
    return {
      kind: 'fail',
      error: { code: 'Unavailable', message: 'too many refused changes', terminal: false },
    };
  }

  private async awaitReload(id: string): Promise<void> {
    this.stats.reloads++;
    await awaitReload(this.client, id, this.opts.reloadTimeoutMs ?? 30_000);
  }

  /** Each member of our backends as HAProxy's checks see it (member-health.ts). */
  health(): Promise<MemberHealth[]> {
    return membersHealth(this.client, this.owner);
  }

  async close(): Promise<void> {
    await this.chain;
    await this.client.close();
  }
}
