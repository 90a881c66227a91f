/**
 * Issue 34 on the Avi and F5 simulators, through the whole controller on the sandbox: a
 * RequireDualStack LoadBalancer Service whose Pod has NodePortLocal entries of both families gets
 * the vendor's documented IPv6 fields beside its IPv4 objects: Avi a VsVip with `ip6_address`
 * (`V6`) and a pool of `V6` servers; Avi's IPAM an IPv6 address (`auto_allocate_ip_type:
 * V6_ONLY` in the network's IPv6 subnet); AS3 an IPv6 `virtualAddresses` and IPv6
 * `serverAddresses`. Both addresses reach the Service's status; a restart writes nothing. Faults:
 * Avi's IPAM without an IPv6 subnet cannot serve IPv6, which the Service is told (naming the family)
 * while its IPv4 VIP is served; the simulators hold every field to the object model and the AS3
 * schema, so a field in the wrong place (an IPv6 address in Avi's `ip_address`) is refused there.
 */
import assert from 'node:assert/strict';
import { describe, it, type TestContext } from 'node:test';
import { CoreV1Api, type KubeConfig } from '@kubernetes/client-node';
import { F5Adapter } from '../../adapters/f5/adapter.ts';
import { AviSimulator } from '../../sim/avi/simulator.ts';
import { BigIpSimulator } from '../../sim/f5/simulator.ts';
import type { LoadBalancerAdapter } from '../../src/adapter/contract.ts';
import { Cluster, RecordingEvents } from '../support/cluster.ts';
import { aviAdapter, runController } from '../support/lb-fixtures.ts';
import { eventually, useSandbox } from '../support/sandbox.ts';

const NODE = ['192.0.2.101', 'fd00:34::101'] as const;
type Json = Record<string, unknown>;

/** A dual-stack Service and its Pod, mapped in both families (no agent: the annotation is written). */
async function dualStackCluster(t: TestContext) {
  const { kc } = await useSandbox(t);
  const c = new Cluster(kc);
  await c.node('n1', { internal: [...NODE] });
  await c.service('web', {
    type: 'LoadBalancer',
    enabled: null,
    ports: [{ name: 'http', port: 80, targetPort: 'http' }],
    spec: { ipFamilies: ['IPv4', 'IPv6'], ipFamilyPolicy: 'RequireDualStack' },
  });
  await c.nplPod('web-1', {
    node: 'n1',
    entries: [
      { nodeIP: NODE[0], nodePort: 61001 },
      { nodeIP: NODE[1], nodePort: 61002, ipFamily: 'IPv6' },
    ],
  });
  return { kc, c };
}

/** The controller on the sandbox as cluster c1 with these vip.cidrs (`[]`: none), Events recorded. */
const start = (
  t: TestContext,
  kc: KubeConfig,
  adapter: LoadBalancerAdapter & { close(): Promise<void> },
  cidrs: string,
  events = new RecordingEvents(),
) => runController(t, kc, adapter, 'c1', cidrs.slice(1, -1), events);

const statusIps = async (kc: KubeConfig): Promise<string[]> =>
  (
    (await kc.makeApiClient(CoreV1Api).readNamespacedService({ name: 'web', namespace: 'default' })).status
      ?.loadBalancer?.ingress ?? []
  ).map((i) => i.ip ?? '');

const byName = (m: Map<string, Json>, name: string): Json | undefined =>
  [...m.values()].find((o) => o.name === name);

describe('dual-stack on the Avi simulator', () => {
  it('vip.cidrs: the IPv6 VsVip holds ip6_address (V6), the IPv6 pool V6 servers; status lists both; a restart writes nothing', async (t) => {
    const sim = new AviSimulator();
    const url = await sim.start();
    t.after(() => sim.close());
    const { kc } = await dualStackCluster(t);
    const first = await start(t, kc, aviAdapter(url), '[192.0.2.0/28, "fd00:34:9::/120"]');
    await eventually(async () => (await statusIps(kc)).length === 2, 30_000, 'two addresses');
    const [v4, v6] = await statusIps(kc);
    assert.match(v4!, /^192\.0\.2\./);
    assert.match(v6!, /^fd00:34:9::/);

    const vsvip = byName(sim.objects('vsvip'), 'c1--default-web-TCP-80_v6')!;
    assert.deepEqual((vsvip.vip as Json[])[0], { vip_id: '0', ip6_address: { addr: v6, type: 'V6' } });
    const vsvip4 = byName(sim.objects('vsvip'), 'c1--default-web-TCP-80')!;
    assert.deepEqual(((vsvip4.vip as Json[])[0] as Json).ip_address, { addr: v4, type: 'V4' });
    const pool6 = byName(sim.objects('pool'), 'c1--default-web-http_v6')!;
    assert.deepEqual(
      (pool6.servers as Json[]).map((s) => [s.ip, s.port]),
      [[{ addr: NODE[1], type: 'V6' }, 61002]],
    );
    const pool4 = byName(sim.objects('pool'), 'c1--default-web-http')!;
    assert.deepEqual(
      (pool4.servers as Json[]).map((s) => [s.ip, s.port]),
      [[{ addr: NODE[0], type: 'V4' }, 61001]],
    );

    await first.ctl.settled();
    await first.stop();
    const writes = sim.stats.writes;
    const second = await start(t, kc, aviAdapter(url), '[192.0.2.0/28, "fd00:34:9::/120"]');
    await second.ctl.settled();
    assert.equal(sim.stats.writes, writes, 'a restart writes nothing');
  });

  it("IPAM: an IPv6 address from the network's IPv6 subnet (V6_ONLY); without one, the Service is told and keeps its IPv4 VIP", async (t) => {
    const sim = new AviSimulator({
      networks: [{ name: 'VIP-Network', cidr: '198.51.100.0/28', cidr6: 'fd00:34:99::/120' }],
    });
    const url = await sim.start();
    t.after(() => sim.close());
    const { kc } = await dualStackCluster(t);
    const ipam = { vipNetwork: { name: 'VIP-Network', cidr: '198.51.100.0/28', cidr6: 'fd00:34:99::/120' } };
    const first = await start(t, kc, aviAdapter(url, ipam), '[]');
    await eventually(async () => (await statusIps(kc)).length === 2, 30_000, 'two addresses');
    const [v4, v6] = await statusIps(kc);
    assert.match(v4!, /^198\.51\.100\./);
    assert.equal(v6, 'fd00:34:99::1', "the first address of Avi's IPv6 subnet");
    const vsvip6 = [...sim.objects('vsvip').values()].find((o) =>
      JSON.stringify(o.markers).includes('service/default/web/IPv6'),
    )!;
    const entry = (vsvip6.vip as Json[])[0]!;
    assert.equal(entry.auto_allocate_ip, true);
    assert.equal(entry.auto_allocate_ip_type, 'V6_ONLY');
    assert.deepEqual((entry.ipam_network_subnet as Json).subnet6, {
      ip_addr: { addr: 'fd00:34:99::', type: 'V6' },
      mask: 120,
    });
    assert.deepEqual(entry.ip6_address, { addr: v6, type: 'V6' });
    await first.ctl.settled();
    await first.stop();
    const writes = sim.stats.writes;
    const second = await start(t, kc, aviAdapter(url, ipam), '[]');
    await second.ctl.settled();
    assert.equal(sim.stats.writes, writes, 'a restart writes nothing');
    assert.deepEqual(await statusIps(kc), [v4, v6], 'the addresses stay');
    await second.stop();

    // The same network without an IPv6 subnet configured: IPv6 cannot be served, and the Service hears it.
    const events = new RecordingEvents();
    const v4only = await start(
      t,
      kc,
      aviAdapter(url, { vipNetwork: { name: 'VIP-Network', cidr: '198.51.100.0/28' } }),
      '[]',
      events,
    );
    await v4only.ctl.settled();
    await eventually(
      () =>
        events.seen.some(
          (e) =>
            e.reason === 'IPFamilyNotServed' &&
            /IPv6 cannot be served \(the avi load balancer does not serve IPv6\)/.test(e.message),
        ),
      10_000,
      'the Service is told',
    );
    await eventually(async () => (await statusIps(kc)).join() === v4, 10_000, 'the IPv4 VIP alone');
  });

  it('the simulator refuses an IPv6 address where Avi keeps IPv4 ones', async (t) => {
    const sim = new AviSimulator();
    const url = await sim.start();
    t.after(() => sim.close());
    const login = await fetch(`${url}/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ username: 'admin', password: 'admin' }),
    });
    const cookie = login.headers
      .getSetCookie()
      .map((c) => c.split(';')[0])
      .join('; ');
    const csrf = /csrftoken=([^;]+)/.exec(cookie)?.[1] ?? '';
    const post = (body: Json) =>
      fetch(`${url}/api/vsvip`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          cookie,
          'x-csrftoken': csrf,
          'x-avi-version': '22.1.3',
          referer: url,
        },
        body: JSON.stringify(body),
      });
    const wrong = await post({
      name: 'x',
      vip: [{ vip_id: '0', ip_address: { addr: 'fd00::1', type: 'V6' } }],
    });
    assert.equal(wrong.status, 400, await wrong.text());
    const right = await post({
      name: 'y',
      vip: [{ vip_id: '0', ip6_address: { addr: 'fd00::1', type: 'V6' } }],
    });
    assert.equal(right.status, 201, await right.text());
  });
});

describe('dual-stack on the BIG-IP (AS3) simulator', () => {
  it('an IPv6 virtual address and IPv6 pool members beside the IPv4 ones; a restart declares nothing', async (t) => {
    const sim = new BigIpSimulator({ latencyMs: 5 });
    const url = await sim.start();
    const { kc } = await dualStackCluster(t);
    const adapter = () => new F5Adapter({ owner: 'c1', url, username: 'admin', password: 'admin' });
    t.after(() => sim.close());
    const first = await start(t, kc, adapter(), '[192.0.2.0/28, "fd00:34:9::/120"]');
    await eventually(async () => (await statusIps(kc)).length === 2, 30_000, 'two addresses');
    const [v4, v6] = await statusIps(kc);
    const doc = JSON.stringify(sim.document());
    const find = (name: string): Json => {
      const walk = (o: unknown): Json | undefined => {
        if (!o || typeof o !== 'object') return undefined;
        for (const [k, v] of Object.entries(o as Json)) {
          if (k === name) return v as Json;
          const f = walk(v);
          if (f) return f;
        }
        return undefined;
      };
      return walk(sim.document())!;
    };
    const vs6 = find('c1--default-web-TCP-80_v6');
    assert.ok(vs6, doc.slice(0, 2000));
    assert.deepEqual(vs6.virtualAddresses, [v6]);
    const vs4 = find('c1--default-web-TCP-80');
    assert.deepEqual(vs4.virtualAddresses, [v4]);
    const pool6 = find('c1--default-web-http_v6');
    assert.deepEqual(
      (pool6.members as Json[]).map((m) => [m.serverAddresses, m.servicePort]),
      [[[NODE[1]], 61002]],
    );
    await first.ctl.settled();
    await first.stop();
    const declared = sim.stats.declarations;
    const second = await start(t, kc, adapter(), '[192.0.2.0/28, "fd00:34:9::/120"]');
    await second.ctl.settled();
    assert.equal(sim.stats.declarations, declared, 'a restart declares nothing');
  });
});
