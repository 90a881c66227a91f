/**
 * iptables forwarding: a nat chain of our own, NPL-LB, jumped to from PREROUTING and OUTPUT for
 * local destinations, one DNAT rule per mapping. A sync rewrites the whole chain in one atomic
 * `iptables-restore --noflush` (which also repairs hand-deleted and stray rules); add and remove are
 * single `iptables` calls. IPv6 goes through ip6tables the same way.
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

  constructor(opts: IptablesOptions = {}) {
    this.run = opts.run ?? runCommand;
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
    const rules = forwarded(mappings);
    for (const t of this.tools) {
      await this.must(
        t.restore,
        ['-w', '--noflush'],
        restoreInput(rules.filter((m) => m.family === t.family)),
      );
      await this.ensureJumps(t);
    }
  }

  async add(m: Mapping): Promise<void> {
    const t = this.tool(m.family);
    if (!t || m.hostPort) return;
    await this.must(t.cmd, ['-w', '-t', 'nat', '-A', NPL_CHAIN, ...ruleArgs(m)]);
  }

  async remove(m: Mapping): Promise<void> {
    const t = this.tool(m.family);
    if (!t || m.hostPort) return;
    const r = await this.run(t.cmd, ['-w', '-t', 'nat', '-D', NPL_CHAIN, ...ruleArgs(m)]);
    // Already gone (deleted by hand): the next sync is exact anyway.
    if (r.code !== 0)
      this.log.info({ nodePort: m.nodePort, err: r.stderr.trim() }, 'rule to remove was not there');
  }

  async stop(): Promise<void> {}

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
