/**
 * Two clusters, one BIG-IP: two controllers with different `clusterName`s and identical namespace,
 * Service and Ingress names, on one BIG-IP simulator, in both declaration layouts (per application,
 * AS3 3.56; whole tenant, AS3 3.46). Each keeps to its own partition; the second's first sync, the
 * first's scaling and the second's `deleteConfig` leave the other's tenant exactly as it was.
 */
import assert from 'node:assert/strict';
import { describe, it, type TestContext } from 'node:test';
import { isDeepStrictEqual } from 'node:util';
import type { KubeConfig } from '@kubernetes/client-node';
import { F5Adapter } from '../../adapters/f5/adapter.ts';
import { BigIpSimulator } from '../../sim/f5/simulator.ts';
import { deleteOwnedConfig } from '../../src/controller/delete-config.ts';
import { createLogger } from '../../src/runtime/logger.ts';
import { runController, webCluster } from '../support/lb-fixtures.ts';
import { eventually } from '../support/sandbox.ts';

type Json = Record<string, unknown>;

const adapterFor = (url: string, owner: string) =>
  new F5Adapter({ owner, url, username: 'admin', password: 'admin', taskPollMs: 10 });

const controller = (t: TestContext, kc: KubeConfig, url: string, name: string, cidr: string) =>
  runController(t, kc, adapterFor(url, name), name, cidr);

for (const as3Version of ['3.56.0', '3.46.0']) {
  describe(`F5: two clusters on one BIG-IP (AS3 ${as3Version})`, () => {
    it('each keeps to its own partition; first sync, scaling and deleteConfig leave the other alone', async (t) => {
      const sim = new BigIpSimulator({ as3Version });
      const url = await sim.start();
      t.after(() => sim.close());
      const one = await webCluster(t, '127.0.13.1', 41011);
      const two = await webCluster(t, '127.0.13.2', 41012);
      /** A pool's members in a tenant, in whichever layout. */
      const members = (tenant: string, pool: string): number => {
        for (const app of Object.values(sim.tenants.get(tenant) ?? {})) {
          const p = (app as Record<string, { members?: unknown[] }> | null)?.[pool];
          if (p?.members) return p.members.length;
        }
        return 0;
      };
      const services = (tenant: string) =>
        Object.values(sim.tenants.get(tenant) ?? {}).flatMap((app) =>
          Object.entries((app as Json | null) ?? {})
            .filter(([, o]) => String((o as Json | null)?.class ?? '').startsWith('Service_'))
            .map(([n]) => n),
        );

      const first = await controller(t, one.kc, url, 'c1', '192.0.2.0/28');
      await eventually(() => services('npl_lb_c1').length === 2, 10_000, 'c1 L4 and L7 services');
      await first.ctl.settled();
      const c1 = structuredClone(sim.tenants.get('npl_lb_c1'));

      const second = await controller(t, two.kc, url, 'c2', '192.0.2.16/28');
      await eventually(() => services('npl_lb_c2').length === 2, 10_000, 'c2 L4 and L7 services');
      await second.ctl.settled();
      assert.deepEqual(sim.tenants.get('npl_lb_c1'), c1, "c2's first sync left c1's partition as it was");
      assert.deepEqual(services('npl_lb_c2').sort(), ['c2--default-web-TCP-80', 'c2--ingress-npl']);
      assert.equal(members('npl_lb_c2', 'c2--default-web-http'), 1);

      const c2 = structuredClone(sim.tenants.get('npl_lb_c2'));
      await one.c.nplPod('web-2', { node: 'n1', entries: [{ nodeIP: '127.0.13.1', nodePort: 41013 }] });
      await eventually(() => members('npl_lb_c1', 'c1--default-web-http') === 2, 10_000, 'c1 scaled');
      await first.ctl.settled();
      assert.ok(
        isDeepStrictEqual(sim.tenants.get('npl_lb_c2'), c2),
        "c1's scaling left c2's partition alone",
      );

      await second.stop();
      const adapter = adapterFor(url, 'c2');
      t.after(() => adapter.close());
      const c1Now = structuredClone(sim.tenants.get('npl_lb_c1'));
      await deleteOwnedConfig(adapter, createLogger({ name: 'test', level: 'silent' }), { pauseMs: 50 });
      assert.equal(sim.tenants.has('npl_lb_c2'), false, "c2's partition is empty and gone");
      assert.deepEqual(sim.tenants.get('npl_lb_c1'), c1Now, "c2's deleteConfig left c1's partition alone");
    });
  });
}
