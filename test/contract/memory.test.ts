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
    // The device's fields are the model's own: read and set on the stored pool.
    policyOnDevice: {
      rows: [
        {
          policy: { algorithm: 'LeastConnections' },
          device: { algorithm: 'LeastConnections' },
          hand: { algorithm: 'SourceHash' },
        },
        {
          policy: { algorithm: 'HeaderHash', hashKey: 'x-user' },
          http: true,
          device: { hashKey: 'x-user' },
          hand: { hashKey: 'x-other' },
        },
        {
          policy: { persistence: 'SourceIP' },
          device: { persistence: 'SourceIP' },
          hand: { persistence: undefined },
        },
        { policy: { maxConnections: 25 }, device: { maxConnections: 25 }, hand: { maxConnections: 7 } },
        {
          policy: { slowStartSeconds: 4 },
          device: { slowStartSeconds: 4 },
          hand: { slowStartSeconds: undefined },
        },
        {
          policy: { connectTimeoutSeconds: 3 },
          device: { connectTimeoutSeconds: 3 },
          hand: { connectTimeoutSeconds: 9 },
        },
        {
          policy: { serverTimeoutSeconds: 90 },
          device: { serverTimeoutSeconds: 90 },
          hand: { serverTimeoutSeconds: 5 },
        },
        { policy: { retries: 0 }, device: { retries: 0 }, hand: { retries: 3 } },
        {
          policy: { backendProtocol: 'h2c' },
          http: true,
          device: { backendProtocol: 'h2c' },
          hand: { backendProtocol: undefined },
        },
      ],
      fields: async (name) => ({ ...device.pools.get(name)!.pool }),
      edit: async (name, fields) => {
        const p = device.pools.get(name)!.pool as unknown as Record<string, unknown>;
        for (const [k, v] of Object.entries(fields)) {
          if (v === undefined) delete p[k];
          else p[k] = v;
        }
      },
    },
    close: async () => {},
  };
});
