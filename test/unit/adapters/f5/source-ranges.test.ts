/**
 * A Service's client filters on BIG-IP (loadBalancerSourceRanges): the L4 virtual server's iRule
 * accepts exactly the ranges and rejects the rest (none: every client), read back as written; a
 * value that is not a CIDR in network form (Tcl, a space, a bracket) is refused for its virtual
 * service alone and never reaches the declaration.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { F5Adapter } from '../../../../adapters/f5/adapter.ts';
import { sourceRangeProblem, sourceRangeRule } from '../../../../adapters/f5/source-ranges.ts';
import { F5_MAX_SOURCE_RANGES } from '../../../../adapters/f5/capabilities.ts';
import type { L4VirtualService, Pool } from '../../../../src/model/types.ts';
import { BigIpSimulator } from '../../../../sim/f5/simulator.ts';

const vs = (name: string, port: number, sourceRanges?: string[]): L4VirtualService => ({
  kind: 'l4',
  name,
  vip: '192.0.2.10',
  port,
  protocol: 'TCP',
  pool: 'c1--default-web-80',
  source: 'default/web',
  ...(sourceRanges ? { sourceRanges } : {}),
});
const pool: Pool = {
  name: 'c1--default-web-80',
  protocol: 'TCP',
  health: 'tcp',
  members: [{ address: '192.0.2.1', port: 61000, node: 'n1', pod: 'default/web-1', enabled: true }],
  service: 'default/web',
  servicePort: 'http',
};

describe('F5: client filters as an iRule', () => {
  it("issue 46: the cap (500 ranges) keeps the iRule under BIG-IP's 64 KiB even with the longest IPv6 ranges", () => {
    const longest = Array.from(
      { length: F5_MAX_SOURCE_RANGES },
      (_, i) => `ffff:ffff:ffff:ffff:ffff:ffff:ffff:${(0xf000 + i).toString(16)}/128`,
    );
    assert.ok(Buffer.byteLength(sourceRangeRule(longest)) < 64 * 1024);
    assert.ok(
      Buffer.byteLength(sourceRangeRule([...longest, ...longest.slice(0, 200)])) >= 64 * 1024,
      'the cap is the limit, near enough',
    );
  });

  it('accepts the ranges, rejects the rest; an empty list rejects all', () => {
    assert.equal(
      sourceRangeRule(['10.0.0.0/8', 'fd00::/8']),
      [
        'when CLIENT_ACCEPTED priority 100 {',
        '  if { [IP::addr [IP::client_addr] equals 10.0.0.0/8] } { return }',
        '  if { [IP::addr [IP::client_addr] equals fd00::/8] } { return }',
        '  reject',
        '}',
      ].join('\n'),
    );
    assert.equal(sourceRangeRule([]), 'when CLIENT_ACCEPTED priority 100 {\n  reject\n}');
  });

  it('refuses anything but a CIDR in network form', () => {
    for (const bad of [
      '10.0.0.0/8] } { HTTP::respond 200 }',
      '10.0.0.0/8 ',
      '10.0.0.0',
      '256.0.0.0/8',
      '10.0.0.0/33',
      'fd00::/129',
      '[fd00::]/8',
      '$x/8',
    ])
      assert.match(sourceRangeProblem(vs('v', 80, [bad])) ?? '', /is not a CIDR in network form/, bad);
    assert.equal(sourceRangeProblem(vs('v', 80, ['192.0.2.0/24', '2001:db8::/32'])), undefined);
  });

  it('on the simulator: written and read back; a hostile range refused alone, the rest applied', async (t) => {
    const sim = new BigIpSimulator();
    const url = await sim.start();
    t.after(() => sim.close());
    const a = new F5Adapter({ owner: 'c1', url, username: 'admin', password: 'admin', taskPollMs: 10 });
    t.after(() => a.close());
    await a.observe();
    const good = vs('c1--default-web-TCP-80', 80, ['10.0.0.0/8']);
    const hostile = vs('c1--default-web-TCP-81', 81, ['10.0.0.0/8] } { HTTP::respond 200 }']);
    const results = await a.apply([
      { op: 'create', kind: 'pool', name: pool.name, desired: pool },
      { op: 'create', kind: 'virtualService', name: good.name, desired: good },
      { op: 'create', kind: 'virtualService', name: hostile.name, desired: hostile },
    ]);
    assert.deepEqual(
      results.map((r) => [r.change.name, r.ok, r.error?.code]),
      [
        [pool.name, true, undefined],
        [good.name, true, undefined],
        [hostile.name, false, 'Invalid'],
      ],
    );
    const text = JSON.stringify(sim.document());
    assert.ok(!text.includes('HTTP::respond'), 'the hostile text never reached the declaration');
    const back = (await a.observe()).owned.virtualServices;
    assert.deepEqual(back, [good]);
  });
});
