/**
 * The BIG-IP simulator holds declarations to F5's AS3 schema with a validator of its own
 * (sim/f5/schema-check.ts), not the adapter's pre-flight check: a wrong mapping is refused with the
 * field at fault even when the adapter's own check is not run (or is wrong), and the two
 * validators, written apart, agree on every address fast-check can think of (a mistake in either
 * shows as a disagreement).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { validateAs3 } from '../../../adapters/f5/as3-validate.ts';
import { schemaProblems } from '../../../sim/f5/schema-check.ts';

const decl = (pool: Record<string, unknown>) => ({
  class: 'ADC',
  schemaVersion: '3.56.0',
  id: 'test',
  t1: { class: 'Tenant', app: { class: 'Application', web: { class: 'Pool', monitors: ['tcp'], ...pool } } },
});
const member = (m: Record<string, unknown>) =>
  decl({ members: [{ servicePort: 61000, serverAddresses: ['192.0.2.1'], ...m }] });

describe('the BIG-IP simulator checks declarations with its own validator', () => {
  const wrong: [string, object, RegExp][] = [
    [
      'an IPv6 member in brackets',
      member({ serverAddresses: ['[fd00::1]'] }),
      /^\/t1\/app\/web\/members\/0\/serverAddresses\/0: must match format "f5ip"/,
    ],
    [
      'an address with port',
      member({ serverAddresses: ['192.0.2.1:80'] }),
      /serverAddresses\/0: must match format "f5ip"/,
    ],
    [
      'a prefix past 32',
      member({ serverAddresses: ['192.0.2.1/33'] }),
      /serverAddresses\/0: must match format "f5ip"/,
    ],
    ['a port as a string', member({ servicePort: '61000' }), /servicePort: must be integer/],
    [
      'a monitor path that is not a BIG-IP path',
      decl({ monitors: [{ bigip: 'Common/tcp' }] }),
      /monitors\/0\/bigip: must match format "f5bigip"/,
    ],
  ];
  for (const [name, body, message] of wrong)
    it(`refuses ${name}`, () => {
      const problems = schemaProblems(body);
      assert.ok(
        problems.some((p) => message.test(p)),
        problems.join('\n'),
      );
    });

  it('takes what AS3 takes: IPv6, route domains, prefixes, BIG-IP paths', () => {
    for (const address of ['fd00::1', '192.0.2.1%2', '10.0.0.0/8', 'fd00::/64', '::1'])
      assert.deepEqual(schemaProblems(member({ serverAddresses: [address] })), [], address);
    assert.deepEqual(schemaProblems(decl({ monitors: [{ bigip: '/Common/tcp' }] })), []);
  });

  it('agrees with the adapter’s own check on every address (two implementations, one schema)', () => {
    const octet = fc.integer({ min: 0, max: 300 });
    const address = fc.oneof(
      fc.tuple(octet, octet, octet, octet).map((o) => o.join('.')),
      fc.ipV6(),
      fc.string({ maxLength: 12 }),
    );
    const value = fc
      .tuple(address, fc.option(fc.integer({ min: 0, max: 99 })), fc.option(fc.integer({ min: 0, max: 140 })))
      .map(([a, rd, prefix]) => `${a}${rd === null ? '' : `%${rd}`}${prefix === null ? '' : `/${prefix}`}`);
    fc.assert(
      fc.property(value, (v) => {
        const body = member({ serverAddresses: [v] });
        assert.equal(schemaProblems(body).length === 0, validateAs3(body).length === 0, v);
      }),
      { numRuns: 500 },
    );
  });
});
