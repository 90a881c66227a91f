/**
 * The demo's load balancer: the registry's vendor that offers a demo device (`Vendor.demo`, one
 * that carries traffic on loopback), when it is installed here; else the in-memory one, said
 * plainly with what to install.
 */
import { VENDORS } from '../../adapters/index.ts';
import type { LoadBalancerAdapter } from '../adapter/contract.ts';
import type { Vendor, VendorDemo } from '../adapter/vendor.ts';
import type { NplController } from '../controller/controller.ts';
import type { Logger } from '../runtime/logger.ts';

/** The vendor whose device the demo runs, and its flags (`npl-lb demo --<flag>`). */
export const DEMO_VENDOR: Vendor & { demo: VendorDemo } = (() => {
  const v = VENDORS.find((x) => x.demo);
  if (!v?.demo) throw new Error('no vendor of the registry offers a demo device');
  return v as Vendor & { demo: VendorDemo };
})();

/** The load balancer, what the banner says of it, and whether traffic flows through it. */
export async function demoLoadBalancer(o: {
  flags: Record<string, string>;
  dir: string;
  log: Logger;
  cleanups: (() => Promise<void> | void)[];
  /** The controller, once made: told when the device dies and is started again. */
  controller: () => NplController | undefined;
}): Promise<{ adapter: LoadBalancerAdapter; note: string; traffic: boolean }> {
  const started = await DEMO_VENDOR.demo.start({
    flags: o.flags,
    dir: o.dir,
    log: o.log,
    cleanups: o.cleanups,
    failed: (why) => o.controller()?.device.failed(why),
    restarted: () => o.controller()?.metrics.deviceRestarts.inc(),
  });
  if ('adapter' in started) return { ...started, traffic: true };
  const memory = VENDORS.find((v) => v.type === 'memory')!;
  return {
    adapter: memory.create({ owner: 'demo', settings: { type: 'memory' }, env: {} }),
    note: `the in-memory load balancer: ${started.missing}`,
    traffic: false,
  };
}
