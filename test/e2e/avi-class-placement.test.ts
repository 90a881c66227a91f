/**
 * Per-class infrastructure through the whole controller (issue 33 item 3): two GatewayClasses on
 * one controller, each naming LoadBalancerParameters with its own Service Engine group, land their
 * Gateways' virtual services in two SE groups on the Avi simulator; a restart writes nothing;
 * changing a class's parameters moves its virtual services; a class whose parameters do not exist
 * is `Accepted: False, InvalidParameters` and its Gateway programs nothing.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { installNplLbCrds } from '../../src/sandbox/npl-lb-crds.ts';
import { AviSimulator } from '../../sim/avi/simulator.ts';
import { GW_API, installGatewayApi } from '../support/gateway-api.ts';
import { aviAdapter, runController, webCluster } from '../support/lb-fixtures.ts';
import { api, eventually } from '../support/sandbox.ts';

const PARAMS = '/apis/npl-lb.io/v1alpha1/namespaces/default/loadbalancerparameters';

describe('LoadBalancerParameters on Avi, through the controller', () => {
  it('two classes in two SE groups; a restart writes nothing; a class moves with its parameters; missing parameters refuse the class', async (t) => {
    const sim = new AviSimulator({ serviceEngineGroups: ['se-team-a', 'se-team-b'] });
    const url = await sim.start();
    t.after(() => sim.close());
    const { kc } = await webCluster(t, '127.0.13.2', 41111);
    const server = kc.getCurrentCluster()!.server;
    await installGatewayApi(server);
    await installNplLbCrds(server);
    const post = async (path: string, body: unknown) => {
      const r = await api(server, 'POST', path, body);
      assert.ok(r.status < 300, `${path}: ${r.status} ${JSON.stringify(r.body).slice(0, 200)}`);
    };
    for (const team of ['a', 'b']) {
      await post(PARAMS, {
        apiVersion: 'npl-lb.io/v1alpha1',
        kind: 'LoadBalancerParameters',
        metadata: { name: `team-${team}` },
        spec: { avi: { serviceEngineGroup: `se-team-${team}` } },
      });
    }
    const klass = (name: string, params: string) =>
      post(`${GW_API}/gatewayclasses`, {
        metadata: { name },
        spec: {
          controllerName: 'npl-lb.io/gateway-controller',
          parametersRef: {
            group: 'npl-lb.io',
            kind: 'LoadBalancerParameters',
            name: params,
            namespace: 'default',
          },
        },
      });
    const gateway = (name: string, cls: string) =>
      post(`${GW_API}/namespaces/default/gateways`, {
        metadata: { name },
        spec: { gatewayClassName: cls, listeners: [{ name: 'http', port: 80, protocol: 'HTTP' }] },
      });
    await klass('team-a', 'team-a');
    await klass('team-b', 'team-b');
    await klass('broken', 'nowhere');
    await gateway('gw-a', 'team-a');
    await gateway('gw-b', 'team-b');
    await gateway('gw-broken', 'broken');
    const first = await runController(t, kc, aviAdapter(url), 'c1', '192.0.2.0/28');

    const seGroupOf = (gw: string): string | undefined => {
      const vs = [...sim.objects('virtualservice').values()].find((v) =>
        String(v.name).endsWith(`.${gw}-HTTP-80`),
      );
      if (!vs) return undefined;
      const uuid =
        String(vs.se_group_ref ?? '')
          .split('/')
          .pop() ?? '';
      return String(
        sim.objects('serviceenginegroup').get(uuid)?.name ??
          sim.store.get('serviceenginegroup')?.get(uuid)?.name ??
          '',
      );
    };
    await eventually(
      () => seGroupOf('gw-a') === 'se-team-a' && seGroupOf('gw-b') === 'se-team-b',
      15_000,
      'each class in its SE group',
    );
    const classStatus = async (name: string) => {
      const b = (await api(server, 'GET', `${GW_API}/gatewayclasses/${name}`)).body as {
        status?: { conditions?: { type: string; status: string; reason: string; message: string }[] };
      };
      return b.status?.conditions?.find((c) => c.type === 'Accepted');
    };
    await eventually(
      async () => (await classStatus('broken'))?.reason === 'InvalidParameters',
      15_000,
      'broken refused',
    );
    assert.match(
      (await classStatus('broken'))!.message,
      /LoadBalancerParameters nowhere not found in namespace default/,
    );
    assert.equal((await classStatus('team-a'))?.status, 'True');
    assert.equal(seGroupOf('gw-broken'), undefined, 'the Gateway of a refused class programs nothing');

    // A restart writes nothing.
    await first.ctl.settled();
    await first.stop();
    const writes = sim.stats.writes;
    const second = await runController(t, kc, aviAdapter(url), 'c1', '192.0.2.0/28');
    await second.ctl.settled();
    assert.equal(sim.stats.writes, writes, 'a restart writes nothing');

    // Team a's parameters move to team b's group: its virtual service follows.
    const patched = await api(
      server,
      'PATCH',
      `${PARAMS}/team-a`,
      { spec: { avi: { serviceEngineGroup: 'se-team-b' } } },
      { 'Content-Type': 'application/merge-patch+json' },
    );
    assert.equal(patched.status, 200);
    await eventually(() => seGroupOf('gw-a') === 'se-team-b', 15_000, 'moved with its parameters');
  });
});
