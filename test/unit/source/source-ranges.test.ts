/**
 * `loadBalancerSourceRanges` (issue 33 item 4): CIDRs read at the validation boundary, the L4
 * virtual services' client filter, and fail closed everywhere it cannot be honoured: a range that
 * does not parse, IPv6 ranges only (no IPv4 client allowed), a load balancer without filters.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Capabilities } from '../../../src/adapter/contract.ts';
import { parseControllerConfig } from '../../../src/config/controller-config.ts';
import type { L4VirtualService } from '../../../src/model/types.ts';
import { applyCapabilities } from '../../../src/source/capabilities.ts';
import { ipv4Network, isIPv6Cidr, MAX_SERVICE_SOURCE_RANGES } from '../../../src/source/cidr.ts';
import { F5_CAPABILITIES } from '../../../adapters/f5/capabilities.ts';
import { buildDesired } from '../../../src/source/desired.ts';
import { SERVE_ALL } from '../../../src/source/gateway/from-view.ts';
import { clusterView, kubeService } from '../../support/kube-objects.ts';

const cfg = parseControllerConfig('clusterName: c1\nvip: {cidrs: [192.0.2.0/28]}\ndefaultLoadBalancer: true');
const withRanges = (ranges?: string[]) =>
  buildDesired(
    clusterView({
      services: [
        kubeService('web', {
          type: 'LoadBalancer',
          ports: [
            { name: 'http', port: 80, targetPort: 8080 },
            { name: 'https', port: 443, targetPort: 8443 },
          ],
          ...(ranges ? { loadBalancerSourceRanges: ranges } : {}),
        }),
      ],
    }),
    cfg,
    { ...SERVE_ALL, caps: { ...SERVE_ALL.caps, sourceRanges: true } },
  );
const l4s = (r: ReturnType<typeof buildDesired>) =>
  r.state.virtualServices.filter((v): v is L4VirtualService => v.kind === 'l4');
const warnings = (r: ReturnType<typeof buildDesired>) =>
  r.findings.filter((f) => f.type === 'Warning').map((f) => `${f.reason}: ${f.message}`);

describe('loadBalancerSourceRanges', () => {
  it('CIDRs: IPv4 in network form, IPv6 recognised, anything else not a CIDR', () => {
    const table: [string, string | undefined][] = [
      ['10.1.2.3/8', '10.0.0.0/8'],
      ['192.0.2.200/25', '192.0.2.128/25'],
      ['0.0.0.0/0', '0.0.0.0/0'],
      ['203.0.113.7/32', '203.0.113.7/32'],
      ['10.0.0.0/33', undefined],
      ['10.0.0.0', undefined],
      ['010.0.0.0/8', undefined],
      ['10.0.0.0/08', undefined],
      ['10.0.0.256/8', undefined],
      ['10.0.0.0/8 ', undefined],
      ['10.0.0.0/8/1', undefined],
      ['{ src 0.0.0.0/0 }', undefined],
      ['', undefined],
    ];
    for (const [text, want] of table) assert.equal(ipv4Network(text), want, JSON.stringify(text));
    assert.ok(isIPv6Cidr('2001:db8::/32'));
    assert.ok(isIPv6Cidr('::/0'));
    assert.ok(!isIPv6Cidr('2001:db8::/129'));
    assert.ok(!isIPv6Cidr('2001:db8::'));
    assert.ok(!isIPv6Cidr('10.0.0.0/8'));
  });

  it('every L4 virtual service of the Service carries the ranges, in network form, sorted, once; none without', () => {
    const r = withRanges(['192.0.2.200/25', '10.1.2.3/8', ' 10.0.0.0/8']);
    assert.equal(l4s(r).length, 2);
    for (const vs of l4s(r)) assert.deepEqual(vs.sourceRanges, ['10.0.0.0/8', '192.0.2.128/25']);
    assert.deepEqual(warnings(r), []);
    for (const v of l4s(withRanges())) assert.equal(v.sourceRanges, undefined);
    for (const v of l4s(withRanges([]))) assert.equal(v.sourceRanges, undefined, 'an empty list: no filter');
  });

  it('fails closed: a range that does not parse serves nothing; IPv6 ranges alone let no IPv4 client in', () => {
    const bad = withRanges(['10.0.0.0/8', 'everyone']);
    assert.deepEqual(l4s(bad), [], 'not served with a filter read in part');
    assert.match(
      warnings(bad).join('\n'),
      /InvalidSourceRange: spec\.loadBalancerSourceRanges: "everyone" is not a CIDR/,
    );
    assert.equal(bad.services.get('default/web')!.virtualServices.length, 0);
    const v6 = withRanges(['2001:db8::/32']);
    for (const vs of l4s(v6)) assert.deepEqual(vs.sourceRanges, [], 'every client refused');
    assert.match(
      warnings(v6).join('\n'),
      /IPFamilyNotServed: spec\.loadBalancerSourceRanges name no IPv4 range: its IPv4 VIP \S+ refuses every client/,
    );
    const mixed = withRanges(['2001:db8::/32', '10.0.0.0/8']);
    for (const vs of l4s(mixed)) assert.deepEqual(vs.sourceRanges, ['10.0.0.0/8']);
  });

  it('a load balancer without client filters is not sent the virtual service at all (never served open), and the Service is told', () => {
    const r = withRanges(['10.0.0.0/8']);
    const noFilters: Capabilities = { ...SERVE_ALL.caps, sourceRanges: false };
    const cut = applyCapabilities(r, noFilters, 'f5');
    assert.deepEqual(l4s(cut), []);
    assert.match(
      cut.findings.map((f) => `${f.reason}: ${f.message}`).join('\n'),
      /UnsupportedByLoadBalancer: the f5 load balancer does not support loadBalancerSourceRanges \(client address filters\): port 80\/TCP is not served/,
    );
    assert.deepEqual(cut.services.get('default/web')!.unsupported?.length, 2);
    // The same Service without ranges is served there.
    assert.equal(l4s(applyCapabilities(withRanges(), noFilters, 'f5')).length, 2);
  });

  it('issue 46: at most 1,000 ranges at the boundary; a device with a lower cap (BIG-IP: 500) is not sent more, and says so', () => {
    const many = (n: number) => Array.from({ length: n }, (_, i) => `10.${i >> 8}.${i & 255}.0/24`);
    const atCap = withRanges(many(MAX_SERVICE_SOURCE_RANGES));
    assert.equal(l4s(atCap).length, 2);
    for (const vs of l4s(atCap)) assert.equal(vs.sourceRanges?.length, MAX_SERVICE_SOURCE_RANGES);
    const over = withRanges(many(MAX_SERVICE_SOURCE_RANGES + 1));
    assert.deepEqual(l4s(over), [], 'a list past the cap refuses the Service (fail closed)');
    assert.match(
      warnings(over).join('\n'),
      /InvalidSourceRange: spec\.loadBalancerSourceRanges: 1001 ranges, at most 1000/,
    );

    const f5 = { ...SERVE_ALL.caps, sourceRanges: true, maxSourceRanges: F5_CAPABILITIES.maxSourceRanges };
    assert.equal(f5.maxSourceRanges, 500);
    assert.equal(l4s(applyCapabilities(withRanges(many(500)), f5, 'f5')).length, 2);
    const cut = applyCapabilities(withRanges(many(501)), f5, 'f5');
    assert.deepEqual(l4s(cut), [], 'never sent open or in part');
    assert.match(
      cut.findings.map((f) => `${f.reason}: ${f.message}`).join('\n'),
      /UnsupportedByLoadBalancer: the f5 load balancer does not support client filters of 501 ranges \(loadBalancerSourceRanges; at most 500 per family\): port 80\/TCP is not served/,
    );
  });
});
