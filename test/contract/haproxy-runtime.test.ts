import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { renderConfig, serverLine } from '../../adapters/haproxy/config.ts';
import { adminSocket, configPath, HaproxyProcess, masterSocket } from '../../adapters/haproxy/process.ts';
import { HaproxyRuntimeAdapter } from '../../adapters/haproxy/runtime-adapter.ts';
import { adapterContract } from './adapter-contract.ts';
import { haproxyMissing } from '../support/haproxy.ts';

// The suite's VIPs are documentation addresses: HAProxy binds them with `transparent` (root), and
// health checks stay off, so no packet ever leaves for them.
adapterContract(
  'haproxy (runtime socket, real HAProxy)',
  async () => {
    const dir = mkdtempSync(join(tmpdir(), 'npl-haproxy-'));
    const paths = { bin: 'haproxy', workDir: dir };
    const opts = { owner: '', adminSocket: adminSocket(paths) };
    writeFileSync(configPath(paths), renderConfig([], [], [], opts));
    const proc = new HaproxyProcess(paths);
    await proc.start();
    const make = (owner: string, failName?: string) =>
      new HaproxyRuntimeAdapter({
        owner,
        bin: 'haproxy',
        configFile: configPath(paths),
        adminSocket: adminSocket(paths),
        masterSocket: masterSocket(paths),
        bindOptions: 'transparent',
        healthChecks: false,
        ...(failName
          ? {
              fault: (c) =>
                c.name === failName
                  ? { code: 'Unavailable', message: 'injected fault', terminal: false }
                  : undefined,
            }
          : {}),
      });
    return {
      adapter: async (owner, o) => make(owner, o?.failName),
      foreignPool: async (pool, owner) => {
        // Another owner's backend, written into the file as a person or another controller would.
        const { readFileSync } = await import('node:fs');
        const text = readFileSync(configPath(paths), 'utf8');
        const section = [
          `backend ${pool.name}`,
          `    # npl-lb owner=${owner}`,
          '    mode tcp',
          ...pool.members.map((m) => serverLine(m, false)),
          '',
        ];
        writeFileSync(configPath(paths), `${text}\n${section.join('\n')}`);
        await proc.reload();
      },
      close: async () => {
        await proc.stop();
        rmSync(dir, { recursive: true, force: true });
      },
    };
  },
  haproxyMissing(),
);
