/**
 * Avi's IPAM allocates the VIPs (adapter.vipNetwork, as AKO's vipNetworkList): through the whole
 * controller on the sandbox, a LoadBalancer Service with two ports gets one address from the
 * network's subnet for both (one VsVip shared by its virtual services), the Ingress class another,
 * each published in the object's status as Avi allocated it; a Service asking for an address keeps
 * it; a restart writes nothing and keeps the addresses; a full subnet is refused with the
 * controller's words and the Service stays pending while the others keep theirs; removing the
 * Service frees its VsVip.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { CoreV1Api, NetworkingV1Api } from '@kubernetes/client-node';
import { AviSimulator } from '../../sim/avi/simulator.ts';
import { aviAdapter, runController, webCluster } from '../support/lb-fixtures.ts';
import { api, eventually } from '../support/sandbox.ts';
import { GW_API, installGatewayApi } from '../support/gateway-api.ts';

const adapterFor = (url: string) =>
  aviAdapter(url, { vipNetwork: { name: 'VIP-Network', cidr: '198.51.100.0/30' } });

describe('Avi IPAM: VIPs allocated by Avi, published as allocated', () => {
  it('one address per Service (shared by its ports) and per Ingress class, from the network; statuses follow; a restart writes nothing', async (t) => {
    // A /30 holds two usable addresses: the Service and the Ingress class; a third finds none.
    const sim = new AviSimulator({ networks: [{ name: 'VIP-Network', cidr: '198.51.100.0/30' }] });
    const url = await sim.start();
    t.after(() => sim.close());
    const { kc, c } = await webCluster(t, '127.0.13.1', 41101);
    const core = kc.makeApiClient(CoreV1Api);
    const net = kc.makeApiClient(NetworkingV1Api);
    await core.patchNamespacedService({
      name: 'web',
      namespace: 'default',
      body: [
        {
          op: 'add',
          path: '/spec/ports/-',
          value: { name: 'alt', port: 8080, targetPort: 'http', protocol: 'TCP' },
        },
      ],
    });
    const api0 = kc.getCurrentCluster()!.server;
    await installGatewayApi(api0);
    const first = await runController(t, kc, adapterFor(url), 'c1', '192.0.2.0/28');
    const serviceIp = async () =>
      (await core.readNamespacedService({ name: 'web', namespace: 'default' })).status?.loadBalancer
        ?.ingress?.[0]?.ip;
    const ingressIp = async () =>
      (await net.readNamespacedIngress({ name: 'shop', namespace: 'default' })).status?.loadBalancer
        ?.ingress?.[0]?.ip;
    await eventually(
      async () => (await serviceIp()) !== undefined && (await ingressIp()) !== undefined,
      15_000,
      'both statuses',
    );
    const [svcIp, ingIp] = [await serviceIp(), await ingressIp()];
    assert.deepEqual(
      new Set([svcIp, ingIp]),
      new Set(['198.51.100.1', '198.51.100.2']),
      'from the network, not vip.cidrs',
    );
    // Both ports' virtual services share one VsVip: one address for the Service.
    const vss = [...sim.objects('virtualservice').values()].filter((v) =>
      String(v.name).startsWith('c1--default-web-TCP-'),
    );
    assert.equal(vss.length, 2);
    assert.equal(new Set(vss.map((v) => v.vsvip_ref)).size, 1, 'one VsVip for both ports');
    const vsvips = [...sim.objects('vsvip').values()];
    assert.equal(vsvips.length, 2);
    assert.ok(vsvips.every((v) => (v.vip as { auto_allocate_ip?: boolean }[])[0]!.auto_allocate_ip));

    // A restart: same addresses, nothing written.
    await first.ctl.settled();
    await first.stop();
    const writes = sim.stats.writes;
    const second = await runController(t, kc, adapterFor(url), 'c1', '192.0.2.0/28');
    await second.ctl.settled();
    assert.equal(sim.stats.writes, writes, 'a restart writes nothing');
    assert.deepEqual([await serviceIp(), await ingressIp()], [svcIp, ingIp]);
    // The state API (dashboard, npl-lb pools) shows the allocated address, not the group.
    assert.deepEqual(
      second.ctl.state
        .document()
        .virtualServices.filter((v) => v.name.startsWith('c1--default-web-'))
        .map((v) => v.vip),
      [svcIp, svcIp],
    );

    // A third Service finds the subnet full: refused with Avi's words, pending; the others keep theirs.
    await c.service('more', {
      type: 'LoadBalancer',
      enabled: null,
      ports: [{ name: 'http', port: 80, targetPort: 'http' }],
    });
    await c.nplPod('more-1', {
      node: 'n1',
      labels: { app: 'more' },
      entries: [{ nodeIP: '127.0.13.1', nodePort: 41102 }],
    });
    await eventually(
      () =>
        /No available IP address/.test(
          second.ctl.state.failure('virtualService', 'c1--default-more-TCP-80')?.message ?? '',
        ),
      15_000,
      'the third VsVip refused for want of an address',
    );
    const more = await core.readNamespacedService({ name: 'more', namespace: 'default' });
    assert.equal(more.status?.loadBalancer?.ingress?.[0]?.ip, undefined, 'pending');
    assert.equal(await serviceIp(), svcIp);

    // A Service that asks for an address keeps it (a static VsVip), whatever the IPAM.
    await core.patchNamespacedService({
      name: 'more',
      namespace: 'default',
      body: [{ op: 'add', path: '/spec/loadBalancerIP', value: '203.0.113.7' }],
    });
    await eventually(
      async () =>
        (await core.readNamespacedService({ name: 'more', namespace: 'default' })).status?.loadBalancer
          ?.ingress?.[0]?.ip === '203.0.113.7',
      15_000,
      'the asked address',
    );
    // A Gateway (its key sorts before the Service's) asking for that published address is refused:
    // the Service keeps it, the Gateway says AddressNotUsable (an address it asked cannot be used).
    const post = async (path: string, body: unknown) =>
      assert.ok((await api(api0, 'POST', path, body)).status < 300);
    await post(`${GW_API}/gatewayclasses`, {
      metadata: { name: 'npl-lb' },
      spec: { controllerName: 'npl-lb.io/gateway-controller' },
    });
    await post(`${GW_API}/namespaces/default/gateways`, {
      metadata: { name: 'a-gw' },
      spec: {
        gatewayClassName: 'npl-lb',
        addresses: [{ type: 'IPAddress', value: '203.0.113.7' }],
        listeners: [{ name: 'http', port: 80, protocol: 'HTTP' }],
      },
    });
    const programmed = async () => {
      const gw = (await api(api0, 'GET', `${GW_API}/namespaces/default/gateways/a-gw`)).body as {
        status?: { conditions?: { type: string; status: string; reason: string; message: string }[] };
      };
      return gw.status?.conditions?.find((x) => x.type === 'Programmed');
    };
    await eventually(
      async () => (await programmed())?.reason === 'AddressNotUsable',
      15_000,
      'the Gateway refused',
    );
    assert.match((await programmed())!.message, /203\.0\.113\.7 is already used by service\/default\/more/);
    await second.ctl.settled();
    assert.equal(
      (await core.readNamespacedService({ name: 'more', namespace: 'default' })).status?.loadBalancer
        ?.ingress?.[0]?.ip,
      '203.0.113.7',
      'the Service keeps its published VIP',
    );
    // Removing the first Service frees its VsVip (nothing else used it).
    const groupOf = (v: Record<string, unknown>) =>
      (v.markers as { key: string; values: string[] }[]).find((m) => m.key === 'vipgroup')?.values[0];
    assert.ok([...sim.objects('vsvip').values()].some((v) => groupOf(v) === 'service/default/web'));
    await core.deleteNamespacedService({ name: 'web', namespace: 'default' });
    await eventually(
      () => ![...sim.objects('vsvip').values()].some((v) => groupOf(v) === 'service/default/web'),
      15_000,
      'the Service’s VsVip gone',
    );
    assert.ok(sim.objects('vsvip').has('c1--default-more-TCP-80'), 'the static one stays');
  });
});
