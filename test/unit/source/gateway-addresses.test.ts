/**
 * A Gateway's `spec.addresses`, as the conformance suite's GatewayOptionalAddressValue and
 * GatewayStaticAddresses (v1.6) want them: an IPAddress without a value gets one, a type npl-lb
 * does not serve is not accepted, an address it cannot use leaves the Gateway accepted and not
 * programmed, one address per family serves both families (issue 34).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseControllerConfig } from '../../../src/config/controller-config.ts';
import { gatewaySchema } from '../../../src/kube/gateway-objects.ts';
import { buildDesired } from '../../../src/source/desired.ts';
import { baseView, INFRA } from './gateway-support.ts';

/** A Gateway of ours with one HTTP listener, asking these addresses. */
const gw = (name: string, addresses: unknown[]) =>
  gatewaySchema.parse({
    metadata: { namespace: INFRA, name, generation: 1, uid: `u-${name}` },
    spec: {
      gatewayClassName: 'npl-lb',
      addresses,
      listeners: [{ name: 'http', port: 80, protocol: 'HTTP' }],
    },
  });

/** The Gateway API objects of a pass with these Gateways, and a config with these CIDRs. */
const pass = (gateways: ReturnType<typeof gw>[], cidrs: string) =>
  buildDesired(
    baseView({ gateways, httpRoutes: [] }),
    parseControllerConfig(`clusterName: c1\nvip: {cidrs: ${cidrs}}\n`),
  ).gateways!;

describe('Gateway API: spec.addresses', () => {
  it('an IPAddress without a value (GatewayOptionalAddressValue) is kept and gets an address; a second address is refused', () => {
    const r = pass(
      [
        gw('without-value', [{ type: 'IPAddress' }]),
        gw('two', [{ value: '192.0.2.3' }, { value: '192.0.2.4' }]),
        gw('hostname', [{ type: 'Hostname', value: 'lb.example.com' }, { value: '192.0.2.5' }]),
        gw('unusable', [{ value: '198.51.100.1' }]),
        gw('usable', [{ value: '192.0.2.6' }]),
      ],
      '[192.0.2.0/28]',
    );
    const a = r.gateways.get(`${INFRA}/without-value`)!;
    assert.match(a.vip ?? '', /^192\.0\.2\.\d+$/, 'an address from vip.cidrs');
    assert.equal(a.conditions[0]!.status, true);
    const says = (name: string) =>
      r.gateways.get(`${INFRA}/${name}`)!.conditions.map((x) => `${x.type}=${x.status}/${x.reason}`);
    // GatewayStaticAddresses: a type npl-lb does not serve is not accepted; an address it cannot
    // use leaves the Gateway accepted and not programmed; a usable one is programmed.
    assert.deepEqual(says('hostname'), [
      'Accepted=false/UnsupportedAddress',
      'Programmed=false/AddressNotAssigned',
    ]);
    assert.deepEqual(says('two'), ['Accepted=true/Accepted', 'Programmed=false/AddressNotUsable']);
    assert.equal(r.gateways.get(`${INFRA}/two`)!.vip, undefined);
    assert.deepEqual(says('unusable'), ['Accepted=true/Accepted', 'Programmed=false/AddressNotUsable']);
    assert.match(r.gateways.get(`${INFRA}/unusable`)!.conditions[1]!.message, /outside vip\.cidrs/);
    assert.deepEqual(says('usable'), ['Accepted=true/Accepted', 'Programmed=true/Programmed']);
    assert.equal(r.gateways.get(`${INFRA}/usable`)!.vip, '192.0.2.6');
  });

  it('a Gateway asking one address of each family is served on both; one of a family not configured is not usable', () => {
    const dual = [gw('dual', [{ value: '192.0.2.3' }, { value: 'fd00:10::3' }])];
    const both = pass(dual, '[192.0.2.0/28, "fd00:10::/120"]').gateways.get(`${INFRA}/dual`)!;
    assert.deepEqual([both.vip, both.moreVips], ['192.0.2.3', ['fd00:10::3']]);
    assert.equal(both.conditions[1]!.reason, 'Programmed');
    const v4only = pass(dual, '[192.0.2.0/28]').gateways.get(`${INFRA}/dual`)!;
    assert.equal(v4only.vip, '192.0.2.3', 'the IPv4 address is still served');
    assert.deepEqual(
      v4only.conditions.map((x) => `${x.type}=${x.status}/${x.reason}`),
      ['Accepted=true/Accepted', 'Programmed=false/AddressNotUsable'],
    );
    assert.match(
      v4only.conditions[1]!.message,
      /IPv6: .*fd00:10::3 is outside vip\.cidrs \(no IPv6 CIDR configured\)/,
    );
  });
});
