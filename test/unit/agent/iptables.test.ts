import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Mapping } from '../../../src/agent/port-table.ts';
import type { CommandRunner } from '../../../src/agent/rules/exec.ts';
import { IptablesBackend, restoreInput } from '../../../src/agent/rules/iptables.ts';
import { NplError } from '../../../src/runtime/errors.ts';

const m = (over: Partial<Mapping> = {}): Mapping => ({
  podKey: 'default/web-1',
  podPort: 8080,
  protocol: 'tcp',
  family: 'IPv4',
  podIP: '10.244.1.5',
  nodePort: 61000,
  hostPort: false,
  reservation: undefined,
  ...over,
});

function fakeRunner(answers: Record<string, { code: number; stdout?: string }> = {}) {
  const calls: { cmd: string; args: string[]; input?: string }[] = [];
  const run: CommandRunner = async (cmd, args, input) => {
    calls.push({ cmd, args, ...(input !== undefined ? { input } : {}) });
    const key = Object.keys(answers).find((k) => `${cmd} ${args.join(' ')}`.includes(k));
    const a = key ? answers[key]! : { code: 0 };
    return { code: a.code, stdout: a.stdout ?? '', stderr: '' };
  };
  return { run, calls };
}

describe('iptables backend', () => {
  it('renders one atomic restore that flushes and refills the NPL-LB chain', () => {
    const text = restoreInput([m(), m({ nodePort: 61001, protocol: 'udp', podPort: 53 })]);
    assert.equal(
      text,
      [
        '*nat',
        ':NPL-LB - [0:0]',
        '-A NPL-LB -p tcp -m tcp --dport 61000 -m comment --comment "npl-lb: default/web-1:8080" -j DNAT --to-destination 10.244.1.5:8080',
        '-A NPL-LB -p udp -m udp --dport 61001 -m comment --comment "npl-lb: default/web-1:53" -j DNAT --to-destination 10.244.1.5:53',
        'COMMIT',
        '',
      ].join('\n'),
    );
    assert.match(
      restoreInput([m({ family: 'IPv6', podIP: 'fd00::5' })]),
      /--to-destination \[fd00::5\]:8080/,
    );
  });

  it('sync: iptables-restore --noflush per family, then jumps from PREROUTING and OUTPUT where missing', async () => {
    const { run, calls } = fakeRunner({ '-C PREROUTING': { code: 1 } });
    const b = new IptablesBackend({ run });
    await b.sync([
      m(),
      m({ family: 'IPv6', podIP: 'fd00::5', nodePort: 61002 }),
      m({ hostPort: true, nodePort: 30080 }),
    ]);
    const restores = calls.filter((c) => c.cmd.endsWith('-restore'));
    assert.deepEqual(
      restores.map((c) => `${c.cmd} ${c.args.join(' ')}`),
      ['iptables-restore -w --noflush', 'ip6tables-restore -w --noflush'],
    );
    assert.ok(!restores[0]!.input!.includes('30080'), 'no rule for hostPort mappings');
    assert.ok(restores[1]!.input!.includes('[fd00::5]'));
    const added = calls.filter(
      (c) => c.args.includes('-A') && (c.args.includes('PREROUTING') || c.args.includes('OUTPUT')),
    );
    assert.deepEqual(
      added.map((c) => `${c.cmd} ${c.args[4]}`),
      ['iptables PREROUTING', 'ip6tables PREROUTING'],
    );
  });

  it('refuses to start when Antrea’s NodePortLocal chain has rules, with one clear line', async () => {
    const { run } = fakeRunner({
      'iptables -w -t nat -S ANTREA-NODE-PORT-LOCAL': {
        code: 0,
        stdout: '-N ANTREA-NODE-PORT-LOCAL\n-A ANTREA-NODE-PORT-LOCAL -p tcp -j DNAT\n',
      },
    });
    await assert.rejects(
      new IptablesBackend({ run }).start(),
      (e: unknown) =>
        e instanceof NplError && e.code === 'NPL_ANTREA_NPL_ACTIVE' && !e.message.includes('\n'),
    );
    const empty = fakeRunner({
      'ANTREA-NODE-PORT-LOCAL': { code: 0, stdout: '-N ANTREA-NODE-PORT-LOCAL\n' },
    });
    await new IptablesBackend({ run: empty.run }).start();
  });

  it('adds and removes asked for together are one iptables-restore --noflush delta, in order; cleanup removes jumps, flushes and deletes the chain', async () => {
    const { run, calls } = fakeRunner({ '-D PREROUTING': { code: 1 }, '-D OUTPUT': { code: 1 } });
    const b = new IptablesBackend({ run, ipv6: false });
    const ms = Array.from({ length: 100 }, (_, i) => m({ podKey: `default/web-${i}`, nodePort: 61000 + i }));
    await Promise.all([...ms.map((x) => b.add(x)), b.remove(ms[0]!), b.add(m({ podIP: '10.244.9.9' }))]);
    assert.equal(calls.length, 1, 'one process for 102 changes');
    assert.deepEqual(calls[0]!.cmd, 'iptables-restore');
    assert.deepEqual(calls[0]!.args, ['-w', '--noflush']);
    const lines = calls[0]!.input!.trim().split('\n');
    assert.equal(lines[0], '*nat');
    assert.equal(lines.at(-1), 'COMMIT');
    assert.equal(lines.length, 104, 'no chain line: the chain is not flushed');
    assert.match(lines[1]!, /^-A NPL-LB -p tcp -m tcp --dport 61000 .* --to-destination 10\.244\.1\.5:8080$/);
    assert.match(
      lines[101]!,
      /^-D NPL-LB -p tcp -m tcp --dport 61000 .* --to-destination 10\.244\.1\.5:8080$/,
    );
    assert.match(
      lines[102]!,
      /^-A NPL-LB -p tcp -m tcp --dport 61000 .* --to-destination 10\.244\.9\.9:8080$/,
    );
    assert.deepEqual(b.stats, { restores: 1, processes: 1, deltas: 1, fallbacks: 0 });
    calls.length = 0;
    await b.cleanup();
    assert.deepEqual(
      calls.map((c) => c.args.slice(0, 5).join(' ')),
      ['-w -t nat -D PREROUTING', '-w -t nat -D OUTPUT', '-w -t nat -F NPL-LB', '-w -t nat -X NPL-LB'],
    );
  });

  it('what arrives while a restore runs goes in the next one', async () => {
    let release: () => void = () => {};
    const calls: string[] = [];
    const run: CommandRunner = async (_cmd, _args, input) => {
      calls.push(input ?? '');
      if (calls.length === 1) await new Promise<void>((r) => (release = r));
      return { code: 0, stdout: '', stderr: '' };
    };
    const b = new IptablesBackend({ run, ipv6: false, batchWindowMs: 1 });
    const first = b.add(m());
    await new Promise((r) => setTimeout(r, 20));
    const more = Array.from({ length: 50 }, (_, i) => b.add(m({ nodePort: 62000 + i })));
    await new Promise((r) => setTimeout(r, 20));
    assert.equal(calls.length, 1, 'the second waits for the first');
    release();
    await Promise.all([first, ...more]);
    assert.equal(calls.length, 2);
    assert.equal(calls[1]!.trim().split('\n').length, 52);
  });

  it('a refused delta (a rule deleted by hand) resyncs the chain from the rules it knows; a failed resync fails the changes', async () => {
    const { run, calls } = fakeRunner();
    let refuse = 1;
    const b = new IptablesBackend({
      ipv6: false,
      run: async (cmd, args, input) => {
        const r = await run(cmd, args, input);
        if (cmd === 'iptables-restore' && !input!.includes(':NPL-LB') && refuse-- > 0) {
          return { code: 1, stdout: '', stderr: 'iptables-restore: line 2 failed' };
        }
        return r;
      },
    });
    await b.sync([m({ nodePort: 61001 }), m({ nodePort: 61002 })]);
    calls.length = 0;
    await Promise.all([b.remove(m({ nodePort: 61001 })), b.add(m({ nodePort: 61003 }))]);
    assert.equal(b.stats.fallbacks, 1);
    const full = calls.find((c) => c.input?.includes(':NPL-LB'))!;
    assert.equal(full.input, restoreInput([m({ nodePort: 61002 }), m({ nodePort: 61003 })]));
    assert.ok(
      calls.some((c) => c.args.includes('-C')),
      'jumps checked after the resync',
    );

    const broken = new IptablesBackend({
      ipv6: false,
      run: async (cmd) => ({ code: cmd === 'iptables-restore' ? 4 : 0, stdout: '', stderr: 'no nat table' }),
    });
    await assert.rejects(
      broken.add(m()),
      (e: unknown) => e instanceof NplError && e.code === 'NPL_RULES_FAILED',
    );
  });

  it('a sync waits for the deltas asked for before it, so none lands on top of it', async () => {
    const { run, calls } = fakeRunner();
    const b = new IptablesBackend({ run, ipv6: false, batchWindowMs: 50 });
    const added = b.add(m({ nodePort: 61005 }));
    await b.sync([m({ nodePort: 61005 })]);
    await added;
    const restores = calls
      .filter((c) => c.cmd === 'iptables-restore')
      .map((c) => (c.input!.includes(':NPL-LB') ? 'full' : 'delta'));
    assert.deepEqual(restores, ['delta', 'full']);
  });
});
