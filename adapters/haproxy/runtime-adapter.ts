/**
 * The HAProxy adapter's `runtime` transport: a stock HAProxy driven through its admin socket, for
 * installations without the Data Plane API. Member changes are runtime commands (`add server`,
 * `set server ... state ready|drain|maint`, `del server`), so scaling never reloads; the
 * configuration file is rewritten after every change so that a reload loses nothing. Changes of
 * structure (frontends, backends, routes) re-render the file, check it with `haproxy -c` and
 * reload through the master socket. The file is the state: observe() reads it back.
 */
import { readFileSync, renameSync, writeFileSync } from 'node:fs';
import { isDeepStrictEqual } from 'node:util';
import { HAPROXY_CAPABILITIES } from './capabilities.ts';
import { poolShape } from './policy-lines.ts';
import type {
  ApplyError,
  ApplyResult,
  Capabilities,
  LoadBalancerAdapter,
  MemberHealth,
} from '../../src/adapter/contract.ts';
import type { Pool, VirtualService } from '../../src/model/types.ts';
import type { Change as AnyChange, CoreChange as Change, Observed } from '../../src/adapter/changes.ts';
import { renderConfig, type RenderOptions } from './config.ts';
import { mirrorScriptWanted, removeMirrorScript, writeMirrorScript } from './mirrors.ts';
import { parseConfig, type Section } from './config-parse.ts';
import { checkConfig, HaproxyError, masterCommand, socketCommand } from './process.ts';
import { FailClosed } from './fail-closed.ts';
import { refusedChanges, unbindableChanges } from './narrow.ts';
import { memberHealth } from './health.ts';
import { changeProblem, type Fail } from './validate.ts';
import { dependencyProblem } from '../../src/adapter/preflight.ts';
import type { HaproxyRuntimeOptions } from './runtime-options.ts';
import { bundlesOf, CaFiles } from './ca-files.ts';
import {
  applyAround,
  applyCertificate,
  CertStore,
  changeCrtLists,
  withoutExtraCertificates,
} from './cert-store.ts';
import { crtListOf } from './crt-list.ts';
import { FILE_PREFIX } from './policy-read.ts';
import { ParkedServers } from './parked-servers.ts';
import { type MemberCommands, settleStates, updateMembers } from './runtime-members.ts';

export type { HaproxyRuntimeOptions };

/** The runtime state of a member's server: a disabled member drains. */

/** A runtime command HAProxy answered with a refusal (false: reload instead); anything else is thrown. */
function refusedCommand(err: unknown): false {
  if (err instanceof HaproxyError && err.code === 'CommandRefused') return false;
  throw err;
}

export class HaproxyRuntimeAdapter implements LoadBalancerAdapter {
  readonly name = 'haproxy';
  readonly owner: string;
  readonly stats = { reloads: 0, runtimeCommands: 0 };
  private pools = new Map<string, Pool>();
  private vss = new Map<string, VirtualService>();
  private foreignSections: Section[] = [];
  /** Our backends whose policy lines are not the ones we write (a hand edit): the next write reloads. */
  private drifted = new Set<string>();
  private loaded = false;
  /**
   * Servers taken out of rotation whose deletion HAProxy refused (idle connections still attached):
   * in maintenance, gone from the file, deleted on a later try or by the next reload.
   */
  private readonly parked = new ParkedServers(
    (backend, server) => this.tryDelete(backend, server),
    (retry) => {
      this.chain = this.chain.then(retry).catch(() => undefined);
    },
  );

  /** Servers waiting in maintenance for HAProxy to let them be deleted (backend/server). */
  get parkedServers(): string[] {
    return this.parked.list;
  }
  /** Applies and retries run one at a time. */
  private chain: Promise<unknown> = Promise.resolve();

  private readonly certs: CertStore;
  private readonly cas: CaFiles;
  private readonly failClosed = new FailClosed();

  constructor(private readonly opts: HaproxyRuntimeOptions) {
    this.owner = opts.owner;
    this.certs = new CertStore(opts.certDir ?? `${opts.configFile}.certs`);
    this.cas = new CaFiles(this.certs.dir);
  }

  capabilities(): Capabilities {
    return HAPROXY_CAPABILITIES;
  }

  /** Where certificates and CA bundles are written (mode 700). */
  get certDir(): string {
    return this.certs.dir;
  }

  private renderOptions(): RenderOptions {
    return {
      owner: this.owner,
      adminSocket: this.opts.adminSocket,
      serverStateFile: `${this.opts.configFile}.state`,
      certDir: this.certs.dir,
      ...(this.opts.bindOptions ? { bindOptions: this.opts.bindOptions } : {}),
      ...(this.opts.socketGroup ? { socketGroup: this.opts.socketGroup } : {}),
      ...(this.opts.healthChecks !== undefined ? { healthChecks: this.opts.healthChecks } : {}),
    };
  }

  /** HAProxy answers on its admin socket (observe() reads the file, which a dead HAProxy leaves). */
  async probe(): Promise<void> {
    await socketCommand(this.opts.adminSocket, 'show info', 2000);
  }

  async observe(): Promise<Observed> {
    let text: string;
    try {
      text = readFileSync(this.opts.configFile, 'utf8');
    } catch {
      text = '';
    }
    const parsed = parseConfig(text, this.owner, this.cas.read);
    // Hosts asking client certificates: from the frontends' crt-lists, as HAProxy reads them.
    this.certs.readHostValidation(parsed.owned.virtualServices, (file) =>
      this.cas.read(`${FILE_PREFIX}${file}`),
    );
    this.pools = new Map(parsed.owned.pools.map((p) => [p.name, p]));
    this.vss = new Map(parsed.owned.virtualServices.map((v) => [v.name, v]));
    this.foreignSections = parsed.foreignSections;
    this.drifted = new Set((parsed.drifted ?? []).map((d) => d.name));
    this.loaded = true;
    return {
      owned: { ...parsed.owned, certificates: this.certs.read() },
      foreign: parsed.foreign,
      ...(parsed.drifted ? { drifted: parsed.drifted } : {}),
    };
  }

  private problem(c: Change): Fail | undefined {
    const has = c.kind === 'pool' ? this.pools.has(c.name) : this.vss.has(c.name);
    return this.opts.fault?.(c) ?? changeProblem(c, has, true);
  }

  /**
   * The structure of the file (everything but members and their states); the file as it is
   * (`asRead`) counts its drifted backends apart, so rewriting one reloads.
   */
  private structure(pools: Map<string, Pool>, vss: Map<string, VirtualService>, asRead = false): unknown {
    return {
      pools: [...pools.values()]
        .map((p) => [...poolShape(p), asRead && this.drifted.has(p.name) ? 'drifted' : ''])
        .sort(),
      // An HTTPS frontend's certificates past its default change at runtime (crt-list commands).
      vss: [...vss.values()].map(withoutExtraCertificates).sort((a, b) => (a.name < b.name ? -1 : 1)),
    };
  }

  /** Certificates written first, then pools and frontends, then certificates no longer used. */
  apply(changes: AnyChange[]): Promise<ApplyResult[]> {
    // A certificate still served by a frontend, or presented by a pool's servers to its members.
    const inUse = (name: string) =>
      [...this.vss.values()].some((v) => (crtListOf(v) ?? []).includes(name)) ||
      [...this.pools.values()].some((p) => p.backendTls?.clientCertificate === name);
    const run = this.chain.then(() =>
      applyAround(
        changes,
        (c) => applyCertificate(this.certs, this.opts.adminSocket, c, inUse),
        (core) => this.applyNow(core),
      ),
    );
    this.chain = run.catch(() => undefined);
    return run;
  }

  /** The batch; then, where a refused change leaves a wider client filter serving, its frontend down. */
  private applyNow(changes: Change[]): Promise<ApplyResult[]> {
    return this.failClosed.apply(
      changes,
      (c) => this.applyBatch(c),
      (name) => this.vss.get(name),
    );
  }

  private async applyBatch(changes: Change[]): Promise<ApplyResult[]> {
    if (!this.loaded) await this.observe();
    await this.parked.deleteNow();
    const failed = new Map<number, Fail>();
    changes.forEach((c, i) => {
      const p = this.problem(c);
      if (p) failed.set(i, p);
    });
    let { pools, vss } = this.without(changes, failed);
    let structural = !isDeepStrictEqual(
      this.structure(pools, vss),
      this.structure(this.pools, this.vss, true),
    );
    try {
      // A change that would fail the reload fails alone, and the others go live: new binds are
      // tried first, and a file `haproxy -c` refuses is narrowed to the changes that break it.
      const narrow = async (refused: Map<number, Fail>) => {
        for (const [i, f] of refused) failed.set(i, f);
        ({ pools, vss } = this.without(changes, failed));
        structural = !isDeepStrictEqual(
          this.structure(pools, vss),
          this.structure(this.pools, this.vss, true),
        );
      };
      if (structural) await narrow(await this.unbindable(changes, failed));
      // Structure by a reload; members by runtime commands, or where HAProxy refuses one (a server
      // it has and the file does not: an apply cut short, an operator's hand) by a reload, which
      // makes HAProxy exactly what the file says. Failing the batch instead would fail it again on
      // every pass, every other tenant's changes with it.
      const live = async () => {
        if (structural) return this.reloadWith(pools, vss);
        if (!(await this.runtimeUpdate(pools, vss).then(() => true, refusedCommand)))
          await this.reloadWith(pools, vss);
      };
      try {
        await live();
      } catch (err) {
        if (!(err instanceof HaproxyError && err.code === 'ConfigInvalid')) throw err;
        const refused = await this.refusedByCheck(changes, failed);
        if (refused.size === 0) throw err;
        await narrow(refused);
        await live();
      }
    } catch (err) {
      const e = err as Error;
      const terminal = err instanceof HaproxyError && err.code === 'ConfigInvalid';
      const error: ApplyError = {
        code: err instanceof HaproxyError ? err.code : 'Unavailable',
        message: e.message,
        terminal,
      };
      // Nothing was applied: re-read the file next time.
      this.loaded = false;
      return changes.map((change, i) => {
        const f = failed.get(i);
        return { change, ok: false, error: f ?? error };
      });
    }
    return changes.map((change, i) => {
      const f = failed.get(i);
      return f ? { change, ok: false, error: f } : { change, ok: true };
    });
  }

  /**
   * The state after the changes that have not failed; a virtual service whose pool is missing
   * cannot be configured and fails too (added to `failed`).
   */
  private without(
    changes: Change[],
    failed: Map<number, Fail>,
  ): { pools: Map<string, Pool>; vss: Map<string, VirtualService> } {
    const pools = new Map(this.pools);
    const vss = new Map(this.vss);
    changes.forEach((c, i) => {
      if (failed.has(i)) return;
      const map = (c.kind === 'pool' ? pools : vss) as Map<string, Pool | VirtualService>;
      if (c.op === 'delete') map.delete(c.name);
      else map.set(c.name, c.desired);
    });
    changes.forEach((c, i) => {
      if (failed.has(i) || c.kind !== 'virtualService' || c.op === 'delete') return;
      const dep = dependencyProblem(c.desired, { pool: (p) => pools.has(p) });
      if (!dep) return;
      failed.set(i, dep);
      const before = this.vss.get(c.name);
      if (before) vss.set(c.name, before);
      else vss.delete(c.name);
    });
    return { pools, vss };
  }

  /** New binds this host cannot listen on (unless binds are transparent): each fails alone. */
  private async unbindable(changes: Change[], failed: Map<number, Fail>): Promise<Map<number, Fail>> {
    if (!this.opts.checkBinds || /\btransparent\b/.test(this.opts.bindOptions ?? '')) return new Map();
    return unbindableChanges(changes, failed, [...this.vss.values()]);
  }

  /** The changes `haproxy -c` refuses, found by bisecting the batch with checks alone (no reload). */
  private refusedByCheck(changes: Change[], failed: Map<number, Fail>): Promise<Map<number, Fail>> {
    return refusedChanges(changes, failed, async (skip) => {
      const { pools, vss } = this.without(changes, skip);
      try {
        await checkConfig(this.opts.bin, this.writeConfig(pools, vss));
        return true;
      } catch (err) {
        if (err instanceof HaproxyError && err.code === 'ConfigInvalid') return err.message;
        throw err;
      }
    });
  }

  private writeConfig(pools: Map<string, Pool>, vss: Map<string, VirtualService>): string {
    this.certs.writeCrtLists(vss.values());
    // The CA bundles the next file names; those neither it nor the running one names go.
    const next = bundlesOf(pools.values(), vss.values());
    this.cas.write(next);
    this.cas.prune(next, bundlesOf(this.pools.values(), this.vss.values()));
    // The mirrors' script (mirrors.ts), where a route mirrors: the file names it.
    if (mirrorScriptWanted(vss.values(), this.foreignSections)) writeMirrorScript(this.certs.dir);
    const text = renderConfig(pools.values(), vss.values(), this.foreignSections, this.renderOptions());
    const tmp = `${this.opts.configFile}.next`;
    writeFileSync(tmp, text);
    return tmp;
  }

  private async reloadWith(pools: Map<string, Pool>, vss: Map<string, VirtualService>): Promise<void> {
    const tmp = this.writeConfig(pools, vss);
    await checkConfig(this.opts.bin, tmp);
    renameSync(tmp, this.opts.configFile);
    const before = await this.workerPid();
    await settleStates((line, ok) => this.command(line, ok), this.pools, pools);
    // Health, weight and drain states carry over to the new worker (server-state-file).
    const states = await socketCommand(this.opts.adminSocket, 'show servers state').catch(() => '');
    if (states.startsWith('1')) writeFileSync(`${this.opts.configFile}.state`, states);
    await masterCommand(this.opts.masterSocket, 'reload');
    this.stats.reloads++;
    const until = Date.now() + 15_000;
    while (Date.now() < until) {
      const now = await this.workerPid();
      if (now !== undefined && now !== before) {
        // The new worker has only what the file says: nothing is parked any more.
        this.parked.clear();
        this.drifted.clear();
        this.pools = pools;
        this.vss = vss;
        // No route mirrors any more and the running configuration loads no script: it goes too.
        if (!mirrorScriptWanted(vss.values(), this.foreignSections)) removeMirrorScript(this.certs.dir);
        return;
      }
      await new Promise((r) => setTimeout(r, 50));
    }
    throw new HaproxyError('ReloadFailed', 'no new HAProxy worker answered after the reload');
  }

  private async workerPid(): Promise<string | undefined> {
    const info = await socketCommand(this.opts.adminSocket, 'show info').catch(() => '');
    return /^Pid: (\d+)/m.exec(info)?.[1];
  }

  private async command(line: string, ok: RegExp = /^\s*$/): Promise<void> {
    this.stats.runtimeCommands++;
    const answer = await socketCommand(this.opts.adminSocket, line);
    // An answer, so the socket works: a refusal is not the device being away.
    if (!ok.test(answer.trim())) throw new HaproxyError('CommandRefused', `${line}: ${answer.trim()}`);
  }

  /** Members only: runtime commands, then the file brought in step (no reload). */
  private async runtimeUpdate(pools: Map<string, Pool>, vss: Map<string, VirtualService>): Promise<void> {
    // Certificates a frontend gains or loses go in at runtime; should HAProxy refuse, a reload does it.
    const certs = await changeCrtLists(this.certs, this.opts.adminSocket, this.vss, vss).then(
      () => true,
      () => false,
    );
    if (!certs) return this.reloadWith(pools, vss);
    const members: MemberCommands = {
      command: (line: string, ok?: RegExp) => this.command(line, ok),
      tryDelete: (backend: string, server: string) => this.tryDelete(backend, server),
      parked: this.parked,
      checks: this.opts.healthChecks ?? true,
      certDir: this.certs.dir,
      loadCas: (p: Pool) =>
        this.cas.load(
          p,
          (line, ok) => this.command(line, ok),
          () => socketCommand(this.opts.adminSocket, 'show ssl ca-file'),
        ),
    };
    for (const [name, next] of pools) await updateMembers(members, this.pools.get(name)?.members ?? [], next);
    const tmp = this.writeConfig(pools, vss);
    renameSync(tmp, this.opts.configFile);
    this.pools = pools;
    this.vss = vss;
  }

  /** `del server`; false when HAProxy keeps it for connections still attached. */
  private async tryDelete(backend: string, server: string): Promise<boolean> {
    this.stats.runtimeCommands++;
    const answer = (await socketCommand(this.opts.adminSocket, `del server ${backend}/${server}`)).trim();
    return /Server deleted|No such server/.test(answer);
  }

  /** Each member of our backends as HAProxy's own checks see it (`show servers state`). */
  async health(): Promise<MemberHealth[]> {
    return memberHealth(this.opts.configFile, this.opts.adminSocket, this.owner);
  }

  async close(): Promise<void> {
    this.parked.stop();
    await this.chain;
  }
}
