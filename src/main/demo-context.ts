/** What the demo's sample applications are created with (demo-sample.ts, demo-shop.ts). */
import type { KubeConfig } from '@kubernetes/client-node';
import type { DemoRange } from './demo-range.ts';

export interface DemoNode {
  name: string;
  ip: string;
}

export interface SampleContext {
  kc: KubeConfig;
  nodes: DemoNode[];
  range: DemoRange;
  dual: boolean;
  workDir: string;
  cleanups: (() => Promise<void> | void)[];
}
