/**
 * iptables forwarding: a nat chain of our own, NPL-LB, jumped to from PREROUTING and OUTPUT for
 * local destinations, one DNAT rule per mapping. A sync rewrites the whole chain in one atomic
 * `iptables-restore --noflush` (which also repairs hand-deleted and stray rules). Adds and removes
 * are collected for a short window (and while a restore runs) and applied as one
 * `iptables-restore --noflush` delta per family; a delta that fails (a rule deleted by hand, a
 * stray one) falls back to a full resync of the chain from the rules we know. IPv6 goes through
 * ip6tables the same way.
 */
import { ErrorCodes, NplError } from '../../runtime/errors.ts';
import { type Logger, silentLogger } from '../../runtime/logger.ts';
import type { Mapping } from '../port-table.ts';
import { type CommandRunner, runCommand } from './exec.ts';
import { type ForwardingBackend, forwarded } from './types.ts';

export const NPL_CHAIN = 'NPL-LB';
export const ANTREA_NPL_CHAIN = 'ANTREA-NODE-PORT-LOCAL';
const JUMP_COMMENT = 'npl-lb: NodePortLocal';

interface Tool {
  family: 'IPv4' | 'IPv6';
  cmd: string;
  restore: string;
}

export interface IptablesOptions {
  run?: CommandRunner;
  logger?: Logger;
  /** Default iptables/ip6tables; iptables-legacy etc. where needed. */
  iptables?: string;
  ip6tables?: string;
  /** Whether to program IPv6 (needs ip6tables). */
  ipv6?: boolean;
  /** How long adds and removes are collected before one restore applies them (ms). */
  batchWindowMs?: number;
}

function destination(m: Mapping): string {
  return m.family === 'IPv6' ? `[${m.podIP}]:${m.podPort}` : `${m.podIP}:${m.podPort}`;
}

/** The rule's match and target, without the chain: the same words for restore input and for -A/-D. */
export function ruleArgs(m: Mapping): string[] {
  return [
    '-p',
    m.protocol,
    '-m',
    m.protocol,
    '--dport',
    String(m.nodePort),
    '-m',
    'comment',
    '--comment',
    `npl-lb: ${m.podKey}:${m.podPort}`,
    '-j',
    'DNAT',
    '--to-destination',
    destination(m),
  ];
}

export const JUMP_ARGS = [
  '-m',
  'addrtype',
  '--dst-type',
  'LOCAL',
  '-m',
  'comment',
  '--comment',
  JUMP_COMMENT,
  '-j',
  NPL_CHAIN,
];

const quote = (a: string): string => (/[\s"]/.test(a) ? `"${a.replaceAll('"', '\\"')}"` : a);

/** The iptables-restore input that appends and deletes rules, leaving the rest of the chain. */
export function deltaInput(ops: { op: '-A' | '-D'; m: Mapping }[]): string {
  const lines = ['*nat'];
  for (const { op, m } of ops) lines.push([op, NPL_CHAIN, ...ruleArgs(m)].map(quote).join(' '));
  lines.push('COMMIT', '');
  return lines.join('\n');
}

const ruleKey = (m: Mapping): string => `${m.family}|${m.protocol}|${m.nodePort}`;

interface PendingOp {
  op: '-A' | '-D';
  m: Mapping;
  resolve: () => void;
  reject: (err: unknown) => void;
}

/** The iptables-restore input that makes the chain exactly these rules. */
export function restoreInput(mappings: Mapping[]): string {
  const lines = ['*nat', `:${NPL_CHAIN} - [0:0]`];
  for (const m of mappings) lines.push(['-A', NPL_CHAIN, ...ruleArgs(m)].map(quote).join(' '));
  lines.push('COMMIT', '');
  return lines.join('\n');
}

export class IptablesBackend implements ForwardingBackend {
  readonly name = 'iptables';
  readonly bindsWildcard = true;
  private readonly run: CommandRunner;
  private readonly log: Logger;
  private readonly tools: Tool[];
  /** The rules the chain should hold, by family/protocol/node port: what a fallback resync writes. */
  private readonly rules = new Map<string, Mapping>();
  private pending: PendingOp[] = [];
  private timer: NodeJS.Timeout | undefined;
  private flushing: Promise<void> | undefined;
  private readonly windowMs: number;
  /** Counts for tests and the bench: restores run, processes spawned, deltas that fell back. */
  readonly stats = { restores: 0, processes: 0, deltas: 0, fallbacks: 0 };

  constructor(opts: IptablesOptions = {}) {
    const run = opts.run ?? runCommand;
    this.run = (cmd, args, input) => {
      this.stats.processes++;
      if (cmd.endsWith('-restore')) this.stats.restores++;
      return run(cmd, args, input);
    };
    this.windowMs = opts.batchWindowMs ?? 5;
    this.log = opts.logger ?? silentLogger();
    const v4 = opts.iptables ?? 'iptables';
    const v6 = opts.ip6tables ?? 'ip6tables';
    this.tools = [{ family: 'IPv4', cmd: v4, restore: `${v4}-restore` }];
    if (opts.ipv6 !== false) this.tools.push({ family: 'IPv6', cmd: v6, restore: `${v6}-restore` });
  }

  private tool(family: string): Tool | undefined {
    return this.tools.find((t) => t.family === family);
  }

  private async must(cmd: string, args: string[], input?: string): Promise<string> {
    const r = await this.run(cmd, args, input);
    if (r.code !== 0) {
      throw new NplError(
        ErrorCodes.RULES_FAILED,
        `${cmd} ${args.join(' ')}: exit ${r.code}: ${r.stderr.trim()}`,
      );
    }
    return r.stdout;
  }

  async start(): Promise<void> {
    const usable: Tool[] = [];
    for (const t of this.tools) {
      const probe = await this.run(t.cmd, ['-w', '-t', 'nat', '-S', ANTREA_NPL_CHAIN]);
      if (probe.code === 127) {
        if (t.family === 'IPv4') throw new NplError(ErrorCodes.RULES_FAILED, `${t.cmd} is not installed`);
        this.log.warn({ cmd: t.cmd }, 'not installed; IPv6 mappings get no rules');
        continue;
      }
      if (probe.code === 0 && probe.stdout.split('\n').some((l) => l.startsWith(`-A ${ANTREA_NPL_CHAIN} `))) {
        throw new NplError(
          ErrorCodes.ANTREA_NPL_ACTIVE,
          `Antrea's NodePortLocal is active on this node (${t.cmd} chain ${ANTREA_NPL_CHAIN} has rules): two NPL agents would fight over the same Pod annotation; disable one (Helm value agent.enabled=false keeps Antrea's)`,
        );
      }
      usable.push(t);
    }
    this.tools.splice(0, this.tools.length, ...usable);
  }

  private async ensureJumps(t: Tool): Promise<void> {
    for (const chain of ['PREROUTING', 'OUTPUT']) {
      const check = await this.run(t.cmd, ['-w', '-t', 'nat', '-C', chain, ...JUMP_ARGS]);
      if (check.code !== 0) await this.must(t.cmd, ['-w', '-t', 'nat', '-A', chain, ...JUMP_ARGS]);
    }
  }

  async sync(mappings: Mapping[]): Promise<void> {
    // Deltas asked for before this sync land first, so none of them is applied on top of it.
    await this.drain();
    const rules = forwarded(mappings);
    this.rules.clear();
    for (const m of rules) this.rules.set(ruleKey(m), m);
    await this.syncKnown(this.tools);
  }

  /** Rewrites the chains of these tools from the rules we know, in one restore each. */
  private async syncKnown(tools: Tool[]): Promise<void> {
    const rules = [...this.rules.values()];
    for (const t of tools) {
      await this.must(
        t.restore,
        ['-w', '--noflush'],
        restoreInput(rules.filter((m) => m.family === t.family)),
      );
      await this.ensureJumps(t);
    }
  }

  add(m: Mapping): Promise<void> {
    if (!this.tool(m.family) || m.hostPort) return Promise.resolve();
    this.rules.set(ruleKey(m), m);
    return this.enqueue('-A', m);
  }

  remove(m: Mapping): Promise<void> {
    if (!this.tool(m.family) || m.hostPort) return Promise.resolve();
    const known = this.rules.get(ruleKey(m));
    if (known && destination(known) === destination(m)) this.rules.delete(ruleKey(m));
    return this.enqueue('-D', m);
  }

  private enqueue(op: '-A' | '-D', m: Mapping): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.pending.push({ op, m, resolve, reject });
      // While a restore runs, what arrives waits for it and goes in the next one.
      if (!this.flushing && !this.timer) this.timer = setTimeout(() => this.flush(), this.windowMs);
    });
  }

  private flush(): void {
    this.timer = undefined;
    const ops = this.pending;
    this.pending = [];
    this.flushing = this.applyDelta(ops).finally(() => {
      this.flushing = undefined;
      if (this.pending.length > 0) this.flush();
    });
  }

  /** One restore per family for the ops; a refused delta resyncs that family's chain. */
  private async applyDelta(ops: PendingOp[]): Promise<void> {
    for (const t of this.tools) {
      const mine = ops.filter((o) => o.m.family === t.family);
      if (mine.length === 0) continue;
      this.stats.deltas++;
      const r = await this.run(t.restore, ['-w', '--noflush'], deltaInput(mine));
      if (r.code === 0) {
        for (const o of mine) o.resolve();
        continue;
      }
      this.stats.fallbacks++;
      this.log.info(
        { cmd: t.restore, ops: mine.length, err: r.stderr.trim() },
        'rule delta refused (a rule changed by hand?); resyncing the chain',
      );
      try {
        await this.syncKnown([t]);
        for (const o of mine) o.resolve();
      } catch (err) {
        for (const o of mine) o.reject(err);
      }
    }
  }

  /** Waits for the adds and removes already asked for. */
  private async drain(): Promise<void> {
    if (this.timer) {
      clearTimeout(this.timer);
      this.flush();
    }
    while (this.flushing) await this.flushing;
  }

  async stop(): Promise<void> {
    await this.drain();
  }

  async cleanup(): Promise<void> {
    for (const t of this.tools) {
      for (const chain of ['PREROUTING', 'OUTPUT']) {
        for (let i = 0; i < 16; i++) {
          const r = await this.run(t.cmd, ['-w', '-t', 'nat', '-D', chain, ...JUMP_ARGS]);
          if (r.code !== 0) break;
        }
      }
      await this.run(t.cmd, ['-w', '-t', 'nat', '-F', NPL_CHAIN]);
      await this.run(t.cmd, ['-w', '-t', 'nat', '-X', NPL_CHAIN]);
    }
  }
}
