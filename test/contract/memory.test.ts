import { MemoryAdapter } from '../../adapters/memory/adapter.ts';
import { MemoryLoadBalancer } from '../../adapters/memory/device.ts';
import { adapterContract } from './adapter-contract.ts';

adapterContract('memory', async () => {
  const device = new MemoryLoadBalancer();
  return {
    adapter: async (owner, opts) =>
      new MemoryAdapter({
        owner,
        device,
        ...(opts?.failName
          ? {
              fault: (c) =>
                c.name === opts.failName
                  ? { code: 'Unavailable', message: 'injected fault', terminal: false }
                  : undefined,
            }
          : {}),
      }),
    foreignPool: async (pool, owner) => device.createPool(owner, pool),
    close: async () => {},
  };
});
