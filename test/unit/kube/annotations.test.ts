import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseNplAnnotation, sameNplEntries, serializeNplAnnotation } from '../../../src/kube/annotations.ts';

describe('nodeportlocal.antrea.io annotation', () => {
  it('serialises byte-for-byte as Antrea does', () => {
    const text = serializeNplAnnotation([
      { podPort: 8080, nodeIP: '10.10.10.10', nodePort: 61002, protocol: 'tcp', ipFamily: 'IPv4' },
    ]);
    assert.equal(
      text,
      '[{"podPort":8080,"nodeIP":"10.10.10.10","nodePort":61002,"protocol":"tcp","ipFamily":"IPv4"}]',
    );
  });

  const cases: [string, string, string[]][] = [
    [
      'current form',
      '[{"podPort":80,"nodeIP":"1.2.3.4","nodePort":61000,"protocol":"udp","ipFamily":"IPv6"}]',
      ['80/udp/IPv6/61000'],
    ],
    [
      'no ipFamily means IPv4',
      '[{"podPort":80,"nodeIP":"1.2.3.4","nodePort":61000,"protocol":"tcp"}]',
      ['80/tcp/IPv4/61000'],
    ],
    [
      'before Antrea 1.7: protocols, one nodePort for all',
      '[{"podPort":80,"nodeIP":"1.2.3.4","nodePort":61000,"protocols":["tcp","udp"]}]',
      ['80/tcp/IPv4/61000', '80/udp/IPv4/61000'],
    ],
    ['sctp dropped', '[{"podPort":80,"nodeIP":"1.2.3.4","nodePort":61000,"protocol":"sctp"}]', []],
    ['empty', '', []],
  ];
  for (const [name, text, want] of cases) {
    it(`reads ${name}`, () => {
      const r = parseNplAnnotation(text);
      assert.ok(r.ok);
      assert.deepEqual(
        r.entries.map((e) => `${e.podPort}/${e.protocol}/${e.ipFamily}/${e.nodePort}`),
        want,
      );
    });
  }

  for (const bad of ['{not json', '{}', '"x"']) {
    it(`rejects ${bad} with a reason`, () => {
      const r = parseNplAnnotation(bad);
      assert.equal(r.ok, false);
      assert.ok(!r.ok && r.error.length > 0);
    });
  }

  for (const bad of [
    '[{"podPort":80}]',
    '[{"podPort":80,"nodeIP":"x","nodePort":70000,"protocol":"tcp"}]',
    '[{"podPort":80,"nodeIP":"x","nodePort":1}]',
  ]) {
    it(`reports the invalid entry of ${bad} and keeps the valid ones`, () => {
      const good =
        '{"podPort":8080,"nodeIP":"192.0.2.1","nodePort":61001,"protocol":"tcp","ipFamily":"IPv4"}';
      const r = parseNplAnnotation(`[${bad.slice(1, -1)},${good}]`);
      assert.ok(r.ok);
      assert.equal(r.invalid.length, 1);
      assert.match(r.invalid[0]!, /^entry 0: /);
      assert.deepEqual(
        r.entries.map((e) => e.nodePort),
        [61001],
      );
    });
  }

  it('compares as a set', () => {
    const a = { podPort: 1, nodeIP: 'x', nodePort: 2, protocol: 'tcp' as const, ipFamily: 'IPv4' as const };
    const b = { ...a, podPort: 3 };
    assert.ok(sameNplEntries([a, b], [b, a]));
    assert.ok(!sameNplEntries([a], [b]));
    assert.ok(!sameNplEntries([a], [a, b]));
  });
});
