/**
 * Adapter name -> factory. A new adapter is a folder and one line here.
 */
import type { LoadBalancerAdapter } from '../src/adapter/contract.ts';
import { MemoryAdapter } from './memory/adapter.ts';

export interface AdapterConfig {
  type: string;
  owner: string;
}

export const ADAPTERS: Record<string, (config: AdapterConfig) => LoadBalancerAdapter> = {
  memory: (c) => new MemoryAdapter({ owner: c.owner }),
};
