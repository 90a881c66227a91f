import { AviAdapter } from '../../adapters/avi/adapter.ts';
import { renderPool } from '../../adapters/avi/objects.ts';
import { AviSimulator } from '../../sim/avi/simulator.ts';
import { adapterContract } from './adapter-contract.ts';
import { AVI_ROWS, aviFields, editAvi } from '../support/avi-policy-fields.ts';

const placement = { cloud: 'Default-Cloud', seGroup: 'Default-Group', vrf: 'global' };

adapterContract('avi (on the Avi Controller simulator)', async () => {
  const sim = new AviSimulator();
  const url = await sim.start();
  const adapters: AviAdapter[] = [];
  const make = (owner: string) =>
    new AviAdapter({ owner, url, username: 'admin', password: 'admin', version: '22.1.3', tenant: 'admin' });
  return {
    adapter: async (owner, opts) => {
      if (opts?.failName) sim.faults.failNames.add(opts.failName);
      const a = make(owner);
      adapters.push(a);
      return a;
    },
    foreignPool: async (pool, owner) => {
      // Written through the API by another controller, as it would be.
      const other = make(owner);
      adapters.push(other);
      const r = await other.session.call('POST', '/api/pool', renderPool(pool, owner, placement));
      if (r.status !== 201) throw new Error(`foreign pool: ${r.status} ${JSON.stringify(r.body)}`);
    },
    policyOnDevice: {
      rows: AVI_ROWS,
      fields: async (name) => aviFields(sim, name),
      edit: async (name, fields) => editAvi(sim, name, fields),
    },
    close: async () => {
      for (const a of adapters) await a.close();
      await sim.close();
    },
  };
});
