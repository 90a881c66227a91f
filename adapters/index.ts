/**
 * Adapter name -> factory. A new adapter is a folder and one line here.
 */
import type { LoadBalancerAdapter } from '../src/adapter/contract.ts';
import { AviAdapter } from './avi/adapter.ts';
import { aviOptions } from './avi/config.ts';
import { F5Adapter } from './f5/adapter.ts';
import { haproxyAdapter } from './haproxy/settings.ts';
import { f5Options } from './f5/config.ts';
import { MemoryAdapter } from './memory/adapter.ts';

export interface AdapterConfig {
  /** The configured clusterName: the owner mark on the load balancer. */
  owner: string;
  /** The `adapter:` block of the controller config, `type` included. */
  settings: { type: string } & Record<string, unknown>;
  env: NodeJS.ProcessEnv;
}

export const ADAPTERS: Record<string, (config: AdapterConfig) => LoadBalancerAdapter> = {
  memory: (c) => new MemoryAdapter({ owner: c.owner }),
  f5: (c) => new F5Adapter(f5Options(c.owner, c.settings, c.env)),
  avi: (c) => new AviAdapter(aviOptions(c.owner, c.settings, c.env)),
  haproxy: (c) => haproxyAdapter(c.owner, c.settings, c.env),
};
