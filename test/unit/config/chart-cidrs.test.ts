/**
 * The chart refuses at install what the controller would refuse at start: values.schema.json's
 * pattern for vip.cidrs and the controller's own CIDR rule agree on a table of IPv4 and IPv6
 * CIDRs, good and bad (a property run on random addresses too).
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { parseControllerConfig } from '../../../src/config/controller-config.ts';

const schema = JSON.parse(readFileSync('deploy/helm/npl-lb/values.schema.json', 'utf8')) as {
  properties: { vip: { properties: { cidrs: { items: { pattern: string } } } } };
};
const chart = new RegExp(schema.properties.vip.properties.cidrs.items.pattern);
const controller = (cidr: string): boolean => {
  try {
    parseControllerConfig(`clusterName: c\nvip: {cidrs: [${JSON.stringify(cidr)}]}\n`);
    return true;
  } catch {
    return false;
  }
};

describe('vip.cidrs: the chart and the controller agree', () => {
  const table: [string, boolean][] = [
    ['10.0.0.0/8', true],
    ['192.0.2.1/32', true],
    ['10.0.100.0/33', false],
    ['10.0.300.0/24', false],
    ['010.0.0.0/8', false],
    ['10.0.0.0', false],
    ['fd00:10::/112', true],
    ['::/0', true],
    ['2001:db8:0:0:0:0:0:1/128', true],
    ['FD00:AB::/32', true],
    ['fd00::/129', false],
    ['fd00:::1/64', false],
    ['fd00::', false],
    ['fd00::1%eth0/64', false],
    ['fd00::/064', false],
  ];
  for (const [cidr, ok] of table)
    it(`${cidr}: ${ok ? 'taken' : 'refused'} by both`, () => {
      assert.equal(chart.test(cidr), ok, 'chart');
      assert.equal(controller(cidr), ok, 'controller');
    });

  it('agree on random IPv4 and IPv6 CIDRs, prefixes in and out of range', () => {
    const cidr = fc.oneof(
      fc.tuple(fc.ipV4(), fc.integer({ min: 0, max: 40 })).map(([a, n]) => `${a}/${n}`),
      fc.tuple(fc.ipV6(), fc.integer({ min: 0, max: 140 })).map(([a, n]) => `${a}/${n}`),
    );
    fc.assert(
      fc.property(cidr, (c) => assert.equal(chart.test(c), controller(c), c)),
      { numRuns: 500, seed: 34 },
    );
  });
});
