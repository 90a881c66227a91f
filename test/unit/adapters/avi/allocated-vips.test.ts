/**
 * The addresses Avi's IPAM gave each VIP group (allocatedVips, which every pass asks for its
 * statuses) through a change: the same map while no VsVip moves, a new one once a VsVip is written,
 * deleted or read again (observe), never a stale address; someone else's VsVip is not ours.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { AviSimulator } from '../../../../sim/avi/simulator.ts';
import { autoVip } from '../../../../src/model/vips.ts';
import { plan } from '../../../../src/plan/diff.ts';
import type { Pool, VirtualService } from '../../../../src/model/types.ts';
import { aviAdapter } from '../../../support/lb-fixtures.ts';
import * as kit from '../../../support/model.ts';

const pool = (n: string): Pool => kit.pool(`c1--default-${n}-80`, [kit.member('192.0.2.1', 61000)]);
const service = (n: string): VirtualService => ({
  ...kit.l4(`c1--default-${n}-TCP-80`, `c1--default-${n}-80`),
  vip: autoVip(`default/${n}`),
});

describe('Avi: the addresses its IPAM allocated', () => {
  it('the same map until a VsVip moves; a new VsVip, a deleted one and a read again each show', async (t) => {
    const sim = new AviSimulator({ networks: [{ name: 'VIP-Network', cidr: '198.51.100.0/29' }] });
    const adapter = aviAdapter(await sim.start(), {
      vipNetwork: { name: 'VIP-Network', cidr: '198.51.100.0/29' },
    });
    t.after(async () => {
      await adapter.close();
      await sim.close();
    });
    const apply = async (names: string[]) => {
      const state = { pools: names.map(pool), virtualServices: names.map(service) };
      const observed = await adapter.observe();
      // Asked before the writes, as a pass before it asks after them: the writes alone must move it.
      adapter.allocatedVips();
      const r = await adapter.apply(plan(state, observed).changes);
      assert.deepEqual(
        r.filter((x) => !x.ok).map((x) => x.error?.message),
        [],
      );
    };
    await apply(['web']);
    const first = adapter.allocatedVips();
    assert.deepEqual([...first.keys()], ['default/web']);
    assert.match(first.get('default/web')!, /^198\.51\.100\.\d$/);
    assert.equal(adapter.allocatedVips(), first, 'asked again with nothing written: the same map');

    await apply(['web', 'api']);
    const second = adapter.allocatedVips();
    assert.notEqual(second, first);
    assert.deepEqual([...second.keys()].sort(), ['default/api', 'default/web']);
    assert.equal(second.get('default/web'), first.get('default/web'), 'an address kept stays');

    // Read again from the device (a restart's observe): equal, and then stable again.
    await adapter.observe();
    const read = adapter.allocatedVips();
    assert.deepEqual(read, second);
    assert.equal(adapter.allocatedVips(), read);

    // Someone else's VsVip in the same network is not ours.
    const theirs = await adapter.session.call('POST', '/api/vsvip', {
      name: 'someone-else',
      cloud_ref: '/api/cloud?name=Default-Cloud',
      vrf_context_ref: '/api/vrfcontext?name=global',
      vip: [
        {
          vip_id: '0',
          auto_allocate_ip: true,
          ipam_network_subnet: {
            network_ref: '/api/network?name=VIP-Network',
            subnet: { ip_addr: { addr: '198.51.100.0', type: 'V4' }, mask: 29 },
          },
        },
      ],
      markers: [
        { key: 'clustername', values: ['c2'] },
        { key: 'vipgroup', values: ['default/web'] },
      ],
    });
    assert.equal(theirs.status, 201, JSON.stringify(theirs.body));
    await adapter.observe();
    assert.deepEqual(adapter.allocatedVips(), second, "another cluster's VsVip is not counted");

    // The Service gone: its VsVip goes, and so does its address.
    await apply(['api']);
    assert.deepEqual([...adapter.allocatedVips().keys()], ['default/api']);
    assert.equal(adapter.allocatedVips().get('default/api'), second.get('default/api'));
  });
});
