/**
 * HAProxy as the demo's load balancer (`Vendor.demo`): a supervised HAProxy on the runtime
 * transport when it is installed (killed or crashed, it is started again from the current
 * configuration, and the demo tells the controller, which holds its writes meanwhile, says so on
 * its Pod and counts the restart); where it is not installed, why and how to install it.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import type { VendorDemo } from '../../src/adapter/vendor.ts';
import { renderConfig } from './config.ts';
import { adminSocket, configPath, HaproxyProcess, masterSocket } from './process.ts';
import { HaproxyRuntimeAdapter } from './runtime-adapter.ts';

function installed(bin: string): boolean {
  try {
    execFileSync(bin, ['-v'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

export const HAPROXY_DEMO: VendorDemo = {
  flags: { 'haproxy-bin': { description: 'the HAProxy binary', default: 'haproxy' } },
  async start(o) {
    const bin = o.flags['haproxy-bin'] ?? 'haproxy';
    if (!installed(bin))
      return {
        missing:
          'HAProxy is not installed, so no traffic flows.\n' +
          '  Install it (Debian/Ubuntu: sudo apt-get install haproxy) and run npm start again.',
      };
    const { log } = o;
    rmSync(o.dir, { recursive: true, force: true });
    mkdirSync(o.dir, { recursive: true });
    o.cleanups.push(() => rmSync(o.dir, { recursive: true, force: true }));
    const paths = { bin, workDir: o.dir };
    writeFileSync(
      configPath(paths),
      renderConfig([], [], [], { owner: 'demo', adminSocket: adminSocket(paths) }),
    );
    const haproxy = new HaproxyProcess(paths, {
      onEvent: (e) => {
        if (e.type === 'died') {
          log.error({ code: e.code, signal: e.signal }, 'HAProxy died; restarting it');
          o.failed(`HAProxy died (${e.signal ?? `exit ${e.code}`}); restarting it`);
        } else if (e.type === 'restarted') {
          log.warn({ pid: e.pid, afterMs: e.afterMs }, 'HAProxy restarted');
          o.restarted();
        } else log.error({ err: e.message, retryInMs: e.retryInMs }, 'HAProxy could not be restarted');
      },
    });
    await haproxy.start();
    o.cleanups.push(() => haproxy.stop());
    const adapter = new HaproxyRuntimeAdapter({
      owner: 'demo',
      bin: paths.bin,
      configFile: configPath(paths),
      adminSocket: adminSocket(paths),
      masterSocket: masterSocket(paths),
      // HAProxy runs beside the demo, in its network namespace: new VIPs can be tried first.
      checkBinds: true,
    });
    return { adapter, note: `HAProxy (pid ${haproxy.pid}), configuration in ${configPath(paths)}` };
  },
};
