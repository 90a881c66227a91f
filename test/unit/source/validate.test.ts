import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { hostProblem, ipProblem, pathProblem } from '../../../src/source/validate.ts';
import { allocateVips } from '../../../src/source/vips/vips.ts';

describe('the validation boundary', () => {
  const hosts: [string, boolean][] = [
    ['', true],
    ['a.example', true],
    ['*.a.example', true],
    ['a-b.c1.example', true],
    ['A.example', false],
    ['a..example', false],
    ['*a.example', false],
    ['a.*.example', false],
    ['a.example\n', false],
    ['a example', false],
    ['a"b', false],
    ['-a.example', false],
    [`${'a'.repeat(64)}.example`, true], // as the API server: only the whole name's length is limited
    [Array.from({ length: 50 }, () => 'abcd').join('.'), true],
    [Array.from({ length: 51 }, () => 'abcde').join('.'), false],
  ];
  for (const [h, ok] of hosts) {
    it(`host ${JSON.stringify(h.length > 30 ? `${h.slice(0, 30)}...` : h)} is ${ok ? 'accepted' : 'refused'}`, () => {
      assert.equal(hostProblem(h) === undefined, ok, hostProblem(h));
    });
  }

  const paths: [string, 'Prefix' | 'Exact' | 'ImplementationSpecific', boolean][] = [
    ['/', 'Prefix', true],
    ['/api/v1', 'Prefix', true],
    ['/a;b=c,d:e@f!$&()*+~-._', 'Exact', true],
    ['/%20', 'Exact', true],
    ['/%zz', 'Exact', false],
    ['/%', 'Prefix', false],
    ['api', 'Prefix', false],
    ['', 'ImplementationSpecific', false],
    ['/a//b', 'Prefix', false],
    ['/a/./b', 'Exact', false],
    ['/a/../b', 'Prefix', false],
    ['/a%2Fb', 'Prefix', false],
    ['/a/..', 'Exact', false],
    ['/a/.', 'Prefix', false],
    ['/a//b', 'ImplementationSpecific', true],
    ['/a\nhttp-request return status 200', 'ImplementationSpecific', false],
    ['/a b', 'ImplementationSpecific', false],
    ['/a\tb', 'ImplementationSpecific', false],
    ['/a"b', 'ImplementationSpecific', false],
    ["/a'b", 'ImplementationSpecific', false],
    ['/a`b', 'ImplementationSpecific', false],
    ['/a\\b', 'ImplementationSpecific', false],
    ['/a#b', 'ImplementationSpecific', false],
    ['/a\u0085b', 'ImplementationSpecific', false],
    ['/é', 'ImplementationSpecific', false],
    [`/${'a'.repeat(2048)}`, 'Prefix', false],
  ];
  for (const [p, type, ok] of paths) {
    it(`path ${JSON.stringify(p.slice(0, 40))} (${type}) is ${ok ? 'accepted' : 'refused'}`, () => {
      assert.equal(pathProblem(p, type) === undefined, ok, pathProblem(p, type));
    });
  }

  it('an accepted path or host never holds whitespace, a control character, a quote or a backslash', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 30 }), (s) => {
        for (const type of ['Prefix', 'Exact', 'ImplementationSpecific'] as const) {
          // eslint-disable-next-line no-control-regex
          const unsafe = /[\s"'`\\\u0000-\u001f\u007f-\u009f]/;
          if (pathProblem(`/${s}`, type) === undefined) assert.ok(!unsafe.test(s));
        }
        if (hostProblem(s) === undefined) assert.match(s, /^(\*\.)?[a-z0-9.-]*$/);
      }),
      { numRuns: 2000 },
    );
  });

  it('addresses by family', () => {
    assert.equal(ipProblem('192.0.2.1', 'IPv4'), undefined);
    assert.match(ipProblem('::1', 'IPv4')!, /not an IPv4 address/);
    assert.match(ipProblem('192.0.2.1', 'IPv6')!, /not an IPv6 address/);
    assert.match(ipProblem('192.0.2.1 ')!, /not an IP address/);
    assert.match(ipProblem('host.example')!, /not an IP address/);
  });
});

describe('VIP ownership', () => {
  const cidrs = ['192.0.2.0/28'];
  it('the incumbent keeps its published VIP; a newcomer asking for it gets a conflict', () => {
    const r = allocateVips(
      [
        { key: 'service/a/thief', requested: '192.0.2.5' },
        { key: 'service/z/owner', published: '192.0.2.5' },
      ],
      cidrs,
    );
    assert.deepEqual(r.get('service/z/owner'), { vip: '192.0.2.5' });
    assert.match(
      (r.get('service/a/thief') as { conflict: string }).conflict,
      /192\.0\.2\.5 is already used by service\/z\/owner/,
    );
  });

  it('requests outside vip.cidrs, or not addresses, are invalid; the requester gets nothing', () => {
    const r = allocateVips(
      [
        { key: 'service/a/out', requested: '198.51.100.1' },
        { key: 'service/a/junk', requested: '192.0.2.1\nbind *:22' },
        { key: 'service/a/v6', requested: '2001:db8::1' },
        { key: 'service/a/big', requested: '192.0.2.300' },
      ],
      cidrs,
    );
    for (const k of ['service/a/out', 'service/a/junk', 'service/a/v6', 'service/a/big'])
      assert.ok('invalid' in r.get(k)!, k);
    assert.match((r.get('service/a/out') as { invalid: string }).invalid, /outside vip\.cidrs/);
  });

  it('asking for its own published VIP keeps it; moving to a free one releases the old', () => {
    const r = allocateVips(
      [
        { key: 'service/a/same', requested: '192.0.2.3', published: '192.0.2.3' },
        { key: 'service/a/mover', requested: '192.0.2.9', published: '192.0.2.4' },
        { key: 'service/a/new', requested: '192.0.2.4' },
      ],
      cidrs,
    );
    assert.deepEqual(r.get('service/a/same'), { vip: '192.0.2.3' });
    assert.deepEqual(r.get('service/a/mover'), { vip: '192.0.2.9' });
    assert.deepEqual(r.get('service/a/new'), { vip: '192.0.2.4' });
  });

  it('idempotency: the published state allocates to itself', () => {
    const first = allocateVips([{ key: 'service/a/x' }, { key: 'service/a/y' }], cidrs);
    const again = allocateVips(
      [...first].map(([key, v]) => ({ key, published: (v as { vip: string }).vip })),
      cidrs,
    );
    assert.deepEqual(again, first);
  });
});
