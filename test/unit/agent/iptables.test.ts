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

  it('add and remove are single calls; cleanup removes jumps, flushes and deletes the chain', async () => {
    const { run, calls } = fakeRunner({ '-D PREROUTING': { code: 1 }, '-D OUTPUT': { code: 1 } });
    const b = new IptablesBackend({ run, ipv6: false });
    await b.add(m());
    await b.remove(m());
    await b.cleanup();
    assert.deepEqual(
      calls.map((c) => c.args.slice(0, 5).join(' ')),
      [
        '-w -t nat -A NPL-LB',
        '-w -t nat -D NPL-LB',
        '-w -t nat -D PREROUTING',
        '-w -t nat -D OUTPUT',
        '-w -t nat -F NPL-LB',
        '-w -t nat -X NPL-LB',
      ],
    );
  });
});
