import { F5Adapter, defaultTenant } from '../../adapters/f5/adapter.ts';
import { APP, renderPool } from '../../adapters/f5/declaration.ts';
import { BigIpSimulator } from '../../adapters/f5/simulator.ts';
import { adapterContract } from './adapter-contract.ts';

adapterContract('f5 (AS3 on the BIG-IP simulator)', async () => {
  const sim = new BigIpSimulator();
  const url = await sim.start();
  const adapters: F5Adapter[] = [];
  return {
    adapter: async (owner, opts) => {
      if (opts?.failName) sim.faults.rejectObjects.add(opts.failName);
      const a = new F5Adapter({ owner, url, username: 'admin', password: 'admin', taskPollMs: 10 });
      adapters.push(a);
      return a;
    },
    foreignPool: async (pool, owner) => {
      const tenant = defaultTenant(owner);
      const t = sim.tenants.get(tenant) ?? { class: 'Tenant', [APP]: { class: 'Application' } };
      (t[APP] as Record<string, unknown>)[pool.name] = renderPool(pool, owner);
      sim.tenants.set(tenant, t);
    },
    close: async () => {
      for (const a of adapters) await a.close();
      await sim.close();
    },
  };
});
