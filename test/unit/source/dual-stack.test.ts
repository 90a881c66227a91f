/**
 * IPv6 and dual-stack in the desired state (issue 34): the families a Service is served in (a table
 * per ipFamilyPolicy), VIPs per family (allocation, requests, ownership), members of each family
 * from the NodePortLocal annotation (checked as the IPv4 ones are), the desired-state cache, and
 * nothing silent where a family cannot be served. Frontends and statuses: dual-stack-frontends.test.ts.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { buildDesired } from '../../../src/source/desired.ts';
import { SERVE_ALL } from '../../../src/source/gateway/from-view.ts';
import { serviceFamilies, servableFamilies } from '../../../src/source/vips/service-families.ts';
import { allocateVips, deviceVips } from '../../../src/source/vips/vips.ts';
import { DesiredCache } from '../../../src/controller/desired-cache.ts';
import { serviceIngress } from '../../../src/controller/lb-status.ts';

import { cfg, dualPods, entry, pod, svc, view } from '../../support/dual-stack.ts';

describe('the families a Service is served in', () => {
  const both = ['IPv4', 'IPv6'] as const;
  const cases: [
    string[] | undefined,
    string | undefined,
    readonly ('IPv4' | 'IPv6')[],
    string[],
    RegExp | null,
  ][] = [
    // ipFamilies, policy, servable, families served, what is said
    [undefined, undefined, both, ['IPv4'], null],
    [['IPv6'], 'SingleStack', both, ['IPv6'], null],
    [
      ['IPv6'],
      'SingleStack',
      ['IPv4'],
      ['IPv4'],
      /IPv6 cannot be served \(why IPv6\); the Service gets an IPv4 VIP instead/,
    ],
    [['IPv4'], 'SingleStack', ['IPv6'], ['IPv6'], /IPv4 cannot be served/],
    [['IPv4'], 'PreferDualStack', both, ['IPv4', 'IPv6'], null],
    [['IPv4'], 'PreferDualStack', ['IPv4'], ['IPv4'], null],
    [['IPv6', 'IPv4'], 'PreferDualStack', ['IPv4'], ['IPv4'], /IPv6 cannot be served/],
    [['IPv4', 'IPv6'], 'RequireDualStack', both, ['IPv4', 'IPv6'], null],
    [['IPv6', 'IPv4'], 'RequireDualStack', both, ['IPv6', 'IPv4'], null],
    [
      ['IPv4', 'IPv6'],
      'RequireDualStack',
      ['IPv4'],
      ['IPv4'],
      /\(RequireDualStack\): IPv6 cannot be served \(why IPv6\); it gets an IPv4 VIP only/,
    ],
    [['IPv4'], 'RequireDualStack', ['IPv4'], ['IPv4'], /IPv6 cannot be served/],
    [['IPv4', 'IPv6'], 'RequireDualStack', [], [], /the Service gets no VIP/],
    [['IPv5', 'IPv6', 'IPv6'], 'SingleStack', both, ['IPv6'], null],
  ];
  for (const [families, policy, servable, want, said] of cases)
    it(`${JSON.stringify(families)} ${policy ?? '(none)'} with ${servable.join('+') || 'nothing'} servable -> ${want.join('+') || 'none'}`, () => {
      const r = serviceFamilies(svc('x', families, policy), servable, (f) => `why ${f}`);
      assert.deepEqual(r.families, want);
      if (said) assert.match(r.unserved ?? '', said);
      else assert.equal(r.unserved, undefined);
    });

  it('what is servable: the families of vip.cidrs the load balancer serves, IPv4 when none is configured', () => {
    const lb = (ipv6?: boolean, allocatesVips?: boolean) => ({ name: 'x', caps: { ipv6, allocatesVips } });
    assert.deepEqual(servableFamilies(['IPv4', 'IPv6'], lb(true)).families, ['IPv4', 'IPv6']);
    assert.deepEqual(servableFamilies(['IPv6'], lb(true)).families, ['IPv6']);
    assert.deepEqual(servableFamilies([], lb(true)).families, ['IPv4']);
    const v4only = servableFamilies(['IPv4', 'IPv6'], lb(false));
    assert.deepEqual(v4only.families, ['IPv4']);
    assert.equal(v4only.why('IPv6'), 'the x load balancer does not serve IPv6');
    assert.equal(servableFamilies(['IPv4'], lb(true)).why('IPv6'), 'vip.cidrs has no IPv6 range');
    assert.deepEqual(servableFamilies([], lb(true, true)).families, ['IPv4', 'IPv6']);
  });
});

describe('IPv6 VIPs', () => {
  it('allocated from the IPv6 CIDRs, canonical, never the subnet-router anycast address; deterministic', () => {
    const reqs = Array.from({ length: 255 }, (_, i) => ({ key: `service/default/s${i}` }));
    const r = allocateVips(reqs, ['192.0.2.0/24', 'fd00:10::/120'], 'IPv6');
    const vips = [...r.values()].map((x) => ('vip' in x ? x.vip : 'none'));
    assert.equal(new Set(vips).size, 255, 'every address of the /120 but the first, once each');
    assert.ok(
      vips.every((v) => /^fd00:10::[0-9a-f]{1,2}$/.test(v) && v !== 'fd00:10::'),
      vips.join(' '),
    );
    const over = allocateVips([...reqs, { key: 'service/default/one-more' }], ['fd00:10::/120'], 'IPv6');
    assert.equal([...over.values()].filter((x) => 'exhausted' in x).length, 1, 'a /120 holds 255');
    assert.deepEqual(allocateVips([...reqs].reverse(), ['192.0.2.0/24', 'fd00:10::/120'], 'IPv6'), r);
    // A /64 is 2^64 addresses: allocation probes past the taken ones, never through the range.
    const wide = allocateVips([{ key: 'a' }, { key: 'b' }], ['fd00:20::/64'], 'IPv6');
    assert.ok([...wide.values()].every((x) => 'vip' in x && x.vip.startsWith('fd00:20::')));
  });

  it('requests per family: in range, of the family, canonical; ownership per family', () => {
    const cidrs = ['192.0.2.0/28', 'fd00:10::/120'];
    const r = allocateVips(
      [
        { key: 'service/a', requested: 'FD00:10:0::5' },
        { key: 'service/b', requested: 'fd00:10::5' },
        { key: 'service/c', requested: 'fd00:99::5' },
        { key: 'service/d', requested: '192.0.2.5' },
        { key: 'service/e', published: 'fd00:10:0:0::9' },
        { key: 'service/f', requested: 'fd00:10::9' },
      ],
      cidrs,
      'IPv6',
    );
    assert.deepEqual(r.get('service/a'), { vip: 'fd00:10::5' });
    assert.deepEqual(r.get('service/b'), { conflict: 'fd00:10::5 is already used by service/a' });
    assert.match(JSON.stringify(r.get('service/c')), /fd00:99::5 is outside vip.cidrs \(fd00:10::\/120\)/);
    assert.match(JSON.stringify(r.get('service/d')), /"192.0.2.5\\" is not an IPv6 address/);
    assert.deepEqual(r.get('service/e'), { vip: 'fd00:10::9' }, 'the incumbent keeps its address');
    assert.match(JSON.stringify(r.get('service/f')), /already used by service\/e/);
    // The same keys hold IPv4 addresses apart: a clash in one family is not one in the other.
    const v4 = allocateVips([{ key: 'service/a', requested: '192.0.2.5' }], cidrs, 'IPv4');
    assert.deepEqual(v4.get('service/a'), { vip: '192.0.2.5' });
  });

  it('where the device allocates, an IPv6 group of its own', () => {
    const r = deviceVips(
      [{ key: 'service/default/web' }, { key: 'service/default/v6', requested: 'fd00::7' }],
      'IPv6',
    );
    assert.deepEqual(r.get('service/default/web'), { vip: 'auto:service/default/web/IPv6' });
    assert.deepEqual(r.get('service/default/v6'), { vip: 'fd00::7' });
  });
});

describe('a dual-stack LoadBalancer Service', () => {
  const require = svc('web', ['IPv4', 'IPv6'], 'RequireDualStack');

  it("one virtual service and one pool per family, each pool with its family's members; status lists both", () => {
    const d = buildDesired(view({ services: [require], pods: dualPods }), cfg());
    const vss = d.state.virtualServices;
    assert.deepEqual(
      vss.map((v) => `${v.name} ${v.vip} -> ${v.kind === 'l4' ? v.pool : ''}`),
      [
        `c1--default-web-TCP-80 ${vss[0]!.vip} -> c1--default-web-http`,
        `c1--default-web-TCP-80_v6 ${vss[1]!.vip} -> c1--default-web-http_v6`,
      ],
    );
    assert.match(vss[0]!.vip, /^192\.0\.2\.\d+$/);
    assert.match(vss[1]!.vip, /^fd00:10::[0-9a-f]+$/);
    const pools = new Map(d.state.pools.map((p) => [p.name, p]));
    assert.deepEqual(
      pools.get('c1--default-web-http')!.members.map((m) => `${m.address}:${m.port}`),
      ['192.0.2.101:61000', '192.0.2.102:61000'],
    );
    const v6 = pools.get('c1--default-web-http_v6')!;
    assert.deepEqual(
      v6.members.map((m) => `${m.address}:${m.port}@${m.node}`),
      ['fd00::101:61001@n1', 'fd00::102:61002@n2'],
    );
    const st = d.services.get('default/web')!;
    assert.equal(st.vip, vss[0]!.vip);
    assert.deepEqual(st.moreVips, [vss[1]!.vip]);
    const ingress = serviceIngress(require, st, 'c1', 'Proxy', () => undefined);
    assert.deepEqual(
      ingress.map((i) => [i.ip, i.ports?.map((p) => p.error ?? 'ok')]),
      [
        [vss[0]!.vip, ['ok']],
        [vss[1]!.vip, ['ok']],
      ],
    );
    assert.deepEqual(d.findings, []);
  });

  it("IPv6 entries are checked as IPv4 ones: a nodeIP not of the Pod's Node, a clash, a bad address", () => {
    const pods = [
      pod('a', 'n1', [entry('fd00::102', 61001, 'IPv6')]),
      pod('b', 'n2', [entry('fd00::102', 61002, 'IPv6'), entry('fd00::102', 61003, 'IPv6')]),
      pod('c', 'n1', [entry('192.0.2.101', 61004, 'IPv6')]),
    ];
    const d = buildDesired(view({ services: [require], pods }), cfg());
    const v6 = d.state.pools.find((p) => p.name.endsWith('_v6'))!;
    assert.deepEqual(v6.members, []);
    const said = d.findings.filter((f) => f.kind === 'Pod').map((f) => `${f.key}: ${f.message}`);
    assert.ok(
      said.some((m) => /default\/a: .*nodeIP fd00::102 is not an address of the Pod's Node n1/.test(m)),
      said.join('\n'),
    );
    assert.ok(
      said.some((m) => /default\/b: .*2 different entries claim podPort 8080\/tcp\/IPv6/.test(m)),
      said.join('\n'),
    );
    assert.ok(
      said.some((m) => /default\/c: .*not an IPv6 address/.test(m)),
      said.join('\n'),
    );
  });

  it('a family the configuration cannot serve is said on the Service, naming it', () => {
    const v4only = buildDesired(view({ services: [require], pods: dualPods }), cfg('[192.0.2.0/28]'));
    assert.deepEqual(
      v4only.state.virtualServices.map((v) => v.name),
      ['c1--default-web-TCP-80'],
    );
    assert.match(
      v4only.findings.map((f) => `${f.reason}: ${f.message}`).join('\n'),
      /IPFamilyNotServed: ipFamilies \[IPv4, IPv6\] \(RequireDualStack\): IPv6 cannot be served \(vip.cidrs has no IPv6 range\)/,
    );
    const noV6 = buildDesired(view({ services: [require], pods: dualPods }), cfg(), {
      name: 'f5',
      caps: { ...SERVE_ALL.caps, ipv6: false },
    });
    assert.match(
      noV6.findings.map((f) => f.message).join('\n'),
      /IPv6 cannot be served \(the f5 load balancer does not serve IPv6\)/,
    );
    // An IPv6-only Service in an IPv4 configuration: served in IPv4, said.
    const only6 = buildDesired(
      view({ services: [svc('web', ['IPv6'], 'SingleStack')], pods: dualPods }),
      cfg('[192.0.2.0/28]'),
    );
    assert.match(only6.state.virtualServices[0]!.vip, /^192\.0\.2\./);
    assert.match(only6.findings.map((f) => f.message).join('\n'), /gets an IPv4 VIP instead/);
  });

  it('an IPv6-only Service gets an IPv6 VIP and IPv6 members; a requested address must be of a family it is served in', () => {
    const only6 = svc('six', ['IPv6'], 'SingleStack');
    const d = buildDesired(view({ services: [only6], pods: dualPods }), cfg());
    assert.deepEqual(
      d.state.virtualServices.map((v) => v.name),
      ['c1--default-six-TCP-80_v6'],
    );
    assert.deepEqual(
      d.state.pools.map((p) => [p.name, p.members.length]),
      [['c1--default-six-http_v6', 2]],
    );
    assert.match(d.services.get('default/six')!.vip ?? '', /^fd00:10::/);

    const asked = (
      ann: string,
      s = svc('web', ['IPv4', 'IPv6'], 'RequireDualStack', {}, { 'npl-lb.io/vip': ann }),
    ) => buildDesired(view({ services: [s], pods: dualPods }), cfg()).services.get('default/web')!;
    const twoOk = asked('192.0.2.7, fd00:10::7');
    assert.deepEqual([twoOk.vip, twoOk.moreVips], ['192.0.2.7', ['fd00:10::7']]);
    const wrongFamily = buildDesired(
      view({ services: [svc('web', undefined, undefined, { loadBalancerIP: 'fd00:10::7' })] }),
      cfg(),
    ).services.get('default/web')!;
    assert.equal(wrongFamily.vip, undefined);
    assert.equal(wrongFamily.reason, 'InvalidVIP');
    assert.match(
      wrongFamily.problem ?? '',
      /requested VIP fd00:10::7 is IPv6, and the object is served in IPv4/,
    );
    const twoOfOne = asked('fd00:10::7,fd00:10::8');
    assert.equal(twoOfOne.vip, undefined);
    assert.match(twoOfOne.problem ?? '', /name two IPv6 addresses/);
    // The IPv6 request clashes, the IPv4 address is still served; the problem is said beside it.
    const holder = svc('holder', ['IPv6'], 'SingleStack', {}, { 'npl-lb.io/vip': 'fd00:10::7' });
    const partly = buildDesired(
      view({
        services: [
          holder,
          svc('web', ['IPv4', 'IPv6'], 'RequireDualStack', {}, { 'npl-lb.io/vip': '192.0.2.7,fd00:10::7' }),
        ],
      }),
      cfg(),
    ).services.get('default/web')!;
    assert.equal(partly.vip, '192.0.2.7');
    assert.equal(partly.moreVips, undefined);
    assert.equal(partly.reason, 'VIPConflict');
    assert.match(
      partly.problem ?? '',
      /^IPv6: VIP conflict: fd00:10::7 is already used by service\/default\/holder; served in IPv4 only/,
    );
  });

  it('source ranges per family: each VIP gets the ranges of its family, in network form', () => {
    const s = svc('web', ['IPv4', 'IPv6'], 'RequireDualStack', {
      loadBalancerSourceRanges: ['10.1.2.3/8', 'FD00:AB::1/32'],
    });
    const d = buildDesired(view({ services: [s], pods: dualPods }), cfg());
    assert.deepEqual(
      d.state.virtualServices.map((v) => (v.kind === 'l4' ? v.sourceRanges : undefined)),
      [['10.0.0.0/8'], ['fd00:ab::/32']],
    );
  });

  it('the desired-state cache gives what a full build gives, as Pods of either family change', () => {
    const cache = new DesiredCache();
    const c = cfg();
    const v1 = view({ services: [require], pods: dualPods });
    assert.deepEqual(cache.build(v1, c, SERVE_ALL), buildDesired(v1, c));
    const moved = [
      dualPods[0]!,
      pod('b', 'n2', [entry('192.0.2.102', 61000, 'IPv4'), entry('fd00::102', 61009, 'IPv6')]),
    ];
    moved[1]!.metadata.resourceVersion = '2';
    const v2 = { ...v1, pods: moved };
    const got = cache.build(v2, c, SERVE_ALL, new Set(['default/web']));
    assert.deepEqual(got, buildDesired(v2, c));
    assert.ok(cache.changedPools?.has('c1--default-web-http_v6'));
  });
});

describe('configuration', () => {
  it('vip.cidrs takes IPv6 CIDRs and refuses what is none', () => {
    assert.deepEqual(cfg('["fd00:10::/120"]').vip.cidrs, ['fd00:10::/120']);
    for (const bad of ['"fd00::/129"', '"fd00::1%eth0/64"', '"10.0.100.0/33"', '"010.0.0.0/8"', '"fd00::"'])
      assert.throws(() => cfg(`[${bad}]`), /vip.cidrs.0: must be an IPv4 or IPv6 CIDR/, bad);
  });
});
