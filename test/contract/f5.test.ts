import { F5Adapter, defaultTenant } from '../../adapters/f5/adapter.ts';
import { APP, renderPool } from '../../adapters/f5/declaration.ts';
import { BigIpSimulator } from '../../sim/f5/simulator.ts';
import { adapterContract } from './adapter-contract.ts';
import { editF5, F5_ROWS, f5Fields } from '../support/f5-policy-fields.ts';

// Both layouts: per-application declarations (AS3 3.47 and later; the simulator runs 3.56) and
// whole-tenant declarations (AS3 before 3.47).
for (const [name, as3Version] of [
  ['f5 (AS3 3.56 on the BIG-IP simulator: per-application declarations)', '3.56.0'],
  ['f5 (AS3 3.46 on the BIG-IP simulator: whole-tenant declarations)', '3.46.0'],
] as const) {
  adapterContract(name, async () => {
    const sim = new BigIpSimulator({ as3Version });
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
      policyOnDevice: {
        rows: F5_ROWS,
        fields: async (name) => f5Fields(sim, name),
        edit: async (name, fields) => editF5(sim, name, fields),
      },
      close: async () => {
        for (const a of adapters) await a.close();
        await sim.close();
      },
    };
  });
}
