/**
 * Per-class partitions on BIG-IP through the whole controller (issue 33 item 3), in both
 * declaration layouts (per application, AS3 3.56; whole tenant, AS3 3.46): two GatewayClasses
 * naming LoadBalancerParameters with partitions `team_a` and `team_b` land their Gateways' virtual
 * services in those AS3 tenants, each with a copy of the pool its routes use (an AS3 object points
 * only into its own tenant), while the Ingress stays in the controller's own tenant. Another
 * owner's application already in `team_b` is carried through untouched; a new Pod reaches every
 * copy; a restart writes nothing; a class moved to the other partition leaves nothing of ours in
 * the first; a partition that is one of AS3's own names is refused at the API.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { F5Adapter } from '../../adapters/f5/adapter.ts';
import { installNplLbCrds } from '../../src/sandbox/npl-lb-crds.ts';
import { BigIpSimulator } from '../../sim/f5/simulator.ts';
import { GW_API, installGatewayApi } from '../support/gateway-api.ts';
import { runController, webCluster } from '../support/lb-fixtures.ts';
import { api, eventually } from '../support/sandbox.ts';

type Json = Record<string, unknown>;
const PARAMS = '/apis/npl-lb.io/v1alpha1/namespaces/default/loadbalancerparameters';
const POOL = 'c1--default-web-http.l7';
const FOREIGN = {
  class: 'Application',
  template: 'generic',
  theirs: { class: 'Pool', members: [{ servicePort: 8080, serverAddresses: ['192.0.2.200'] }] },
};

for (const as3Version of ['3.56.0', '3.46.0']) {
  describe(`F5: a partition per class (AS3 ${as3Version})`, () => {
    it('two classes in two partitions with their pools; others carried through; restart writes nothing; a class moves', async (t) => {
      const sim = new BigIpSimulator({ as3Version });
      const url = await sim.start();
      t.after(() => sim.close());
      const { kc, c } = await webCluster(t, '127.0.13.3', 41211);
      const server = kc.getCurrentCluster()!.server;
      await installGatewayApi(server);
      await installNplLbCrds(server);
      const post = async (path: string, body: unknown) => {
        const r = await api(server, 'POST', path, body);
        assert.ok(r.status < 300, `${path}: ${r.status} ${JSON.stringify(r.body).slice(0, 200)}`);
      };
      // Someone else's application in team_b, declared before npl-lb came.
      const login = (await (
        await fetch(`${url}/mgmt/shared/authn/login`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ username: 'admin', password: 'admin', loginProviderName: 'tmos' }),
        })
      ).json()) as { token: { token: string } };
      const pre = await fetch(`${url}/mgmt/shared/appsvcs/declare`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-f5-auth-token': login.token.token },
        body: JSON.stringify({
          class: 'ADC',
          schemaVersion: '3.36.0',
          team_b: { class: 'Tenant', other: FOREIGN },
        }),
      });
      assert.equal(pre.status, 200, await pre.text());

      for (const team of ['a', 'b'])
        await post(PARAMS, {
          apiVersion: 'npl-lb.io/v1alpha1',
          kind: 'LoadBalancerParameters',
          metadata: { name: `team-${team}` },
          spec: { f5: { partition: `team_${team}` } },
        });
      // A partition AS3 keeps for itself is refused by the CRD.
      const reserved = await api(server, 'POST', PARAMS, {
        apiVersion: 'npl-lb.io/v1alpha1',
        kind: 'LoadBalancerParameters',
        metadata: { name: 'common' },
        spec: { f5: { partition: 'Common' } },
      });
      assert.equal(reserved.status, 422, JSON.stringify(reserved.body).slice(0, 300));
      assert.match(JSON.stringify(reserved.body), /AS3's own names/);

      for (const team of ['a', 'b']) {
        await post(`${GW_API}/gatewayclasses`, {
          metadata: { name: `team-${team}` },
          spec: {
            controllerName: 'npl-lb.io/gateway-controller',
            parametersRef: {
              group: 'npl-lb.io',
              kind: 'LoadBalancerParameters',
              name: `team-${team}`,
              namespace: 'default',
            },
          },
        });
        await post(`${GW_API}/namespaces/default/gateways`, {
          metadata: { name: `gw-${team}` },
          spec: {
            gatewayClassName: `team-${team}`,
            listeners: [{ name: 'http', port: 80, protocol: 'HTTP' }],
          },
        });
        await post(`${GW_API}/namespaces/default/httproutes`, {
          metadata: { name: `route-${team}` },
          spec: {
            parentRefs: [{ name: `gw-${team}` }],
            rules: [{ backendRefs: [{ name: 'web', port: 80 }] }],
          },
        });
      }
      const adapter = new F5Adapter({
        owner: 'c1',
        url,
        username: 'admin',
        password: 'admin',
        taskPollMs: 10,
      });
      const first = await runController(t, kc, adapter, 'c1', '192.0.2.0/28');

      /** Our objects of a tenant, by class, in whichever layout; and a pool's member count there. */
      const objects = (tenant: string): Map<string, Json> => {
        const out = new Map<string, Json>();
        for (const [name, app] of Object.entries(sim.tenants.get(tenant) ?? {}))
          if (name !== 'other' && (app as Json | null)?.class === 'Application')
            for (const [k, o] of Object.entries(app as Json))
              if (typeof o === 'object' && o !== null && 'class' in o) out.set(k, o as Json);
        return out;
      };
      const services = (tenant: string) =>
        [...objects(tenant)]
          .filter(([, o]) => String(o.class).startsWith('Service_'))
          .map(([n]) => n)
          .sort();
      const members = (tenant: string) =>
        ((objects(tenant).get(POOL)?.members as unknown[] | undefined) ?? []).length;
      const gwVs = (team: string) => `c1--gw-default.gw-${team}-HTTP-80`;
      const inPartitions = () =>
        services('team_a').includes(gwVs('a')) && services('team_b').includes(gwVs('b'));
      await eventually(inPartitions, 15_000, 'each class in its partition');
      await first.ctl.settled();
      assert.deepEqual(services('npl_lb_c1'), ['c1--default-web-TCP-80', 'c1--ingress-npl']);
      for (const tenant of ['npl_lb_c1', 'team_a', 'team_b'])
        assert.equal(members(tenant), 1, `${tenant} holds a copy of the pool its virtual services use`);
      assert.deepEqual(
        (sim.tenants.get('team_b') as Json).other,
        FOREIGN,
        "another owner's application untouched",
      );

      // A second Pod reaches every copy of the pool.
      await c.nplPod('web-2', { node: 'n1', entries: [{ nodeIP: '127.0.13.3', nodePort: 41212 }] });
      await eventually(
        () => ['npl_lb_c1', 'team_a', 'team_b'].every((tn) => members(tn) === 2),
        15_000,
        'the new member in every tenant',
      );

      // A restart writes nothing.
      await first.ctl.settled();
      await first.stop();
      const declarations = sim.stats.declarations;
      const second = await runController(
        t,
        kc,
        new F5Adapter({ owner: 'c1', url, username: 'admin', password: 'admin', taskPollMs: 10 }),
        'c1',
        '192.0.2.0/28',
      );
      await second.ctl.settled();
      assert.equal(sim.stats.declarations, declarations, 'a restart writes nothing');

      // Team a's parameters name team b's partition: its virtual service and pool go there, and
      // nothing of ours is left in team_a.
      const patched = await api(
        server,
        'PATCH',
        `${PARAMS}/team-a`,
        { spec: { f5: { partition: 'team_b' } } },
        { 'Content-Type': 'application/merge-patch+json' },
      );
      assert.equal(patched.status, 200);
      await eventually(
        () => services('team_b').includes(gwVs('a')) && objects('team_a').size === 0,
        15_000,
        'moved with its parameters',
      );
      assert.equal(members('team_b'), 2);
      assert.deepEqual((sim.tenants.get('team_b') as Json).other, FOREIGN, 'still untouched');
    });
  });
}
