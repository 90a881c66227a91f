/**
 * The demo's load balancer: a supervised HAProxy on the runtime transport when HAProxy is
 * installed (killed or crashed, it is started again from the current configuration, and the
 * controller holds its writes meanwhile, says so on its Pod and counts the restart), else the
 * in-memory one, said plainly.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { renderConfig } from '../../adapters/haproxy/config.ts';
import { adminSocket, configPath, HaproxyProcess, masterSocket } from '../../adapters/haproxy/process.ts';
import { HaproxyRuntimeAdapter } from '../../adapters/haproxy/runtime-adapter.ts';
import { MemoryAdapter } from '../../adapters/memory/adapter.ts';
import type { LoadBalancerAdapter } from '../adapter/contract.ts';
import type { NplController } from '../controller/controller.ts';
import type { Logger } from '../runtime/logger.ts';

function haproxyInstalled(bin: string): boolean {
  try {
    execFileSync(bin, ['-v'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

/** The load balancer, what the banner says of it, and whether traffic flows through it. */
export async function demoLoadBalancer(o: {
  bin: string;
  dir: string;
  log: Logger;
  cleanups: (() => Promise<void> | void)[];
  /** The controller, once made: told when HAProxy dies and is restarted. */
  controller: () => NplController | undefined;
}): Promise<{ adapter: LoadBalancerAdapter; note: string; traffic: boolean }> {
  if (!haproxyInstalled(o.bin)) {
    return {
      adapter: new MemoryAdapter({ owner: 'demo' }),
      note:
        'the in-memory load balancer: HAProxy is not installed, so no traffic flows.\n' +
        '  Install it (Debian/Ubuntu: sudo apt-get install haproxy) and run npm start again.',
      traffic: false,
    };
  }
  const { log } = o;
  rmSync(o.dir, { recursive: true, force: true });
  mkdirSync(o.dir, { recursive: true });
  o.cleanups.push(() => rmSync(o.dir, { recursive: true, force: true }));
  const paths = { bin: o.bin, workDir: o.dir };
  writeFileSync(
    configPath(paths),
    renderConfig([], [], [], { owner: 'demo', adminSocket: adminSocket(paths) }),
  );
  const haproxy = new HaproxyProcess(paths, {
    onEvent: (e) => {
      if (e.type === 'died') {
        log.error({ code: e.code, signal: e.signal }, 'HAProxy died; restarting it');
        o.controller()?.device.failed(`HAProxy died (${e.signal ?? `exit ${e.code}`}); restarting it`);
      } else if (e.type === 'restarted') {
        log.warn({ pid: e.pid, afterMs: e.afterMs }, 'HAProxy restarted');
        o.controller()?.metrics.deviceRestarts.inc();
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
  return {
    adapter,
    note: `HAProxy (pid ${haproxy.pid}), configuration in ${configPath(paths)}`,
    traffic: true,
  };
}
