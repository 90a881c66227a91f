import { readFileSync, writeFileSync } from 'node:fs';
import { serverLine } from '../../adapters/haproxy/config.ts';
import { configPath } from '../../adapters/haproxy/process.ts';
import { haproxyMissing, startHaproxy } from '../support/haproxy.ts';
import { adapterContract } from './adapter-contract.ts';
import { backendFields, editBackend, HAPROXY_CFG_ROWS } from '../support/haproxy-policy-fields.ts';

// The suite's VIPs are documentation addresses: HAProxy binds them with `transparent` (root), and
// health checks stay off, so no packet ever leaves for them.
adapterContract(
  'haproxy (runtime socket, real HAProxy)',
  async () => {
    const cleanups: (() => Promise<void>)[] = [];
    const rig = await startHaproxy({ after: (fn) => void cleanups.push(fn) });
    return {
      adapter: async (owner, o) =>
        rig.adapter(owner, {
          bindOptions: 'transparent',
          healthChecks: false,
          ...(o?.failName
            ? {
                fault: (c) =>
                  c.name === o.failName
                    ? { code: 'Unavailable', message: 'injected fault', terminal: false }
                    : undefined,
              }
            : {}),
        }),
      foreignPool: async (pool, owner) => {
        // Another owner's backend, written into the file as a person or another controller would.
        const file = configPath(rig.paths);
        const section = [
          `backend ${pool.name}`,
          `    # npl-lb owner=${owner}`,
          '    mode tcp',
          ...pool.members.map((m) => serverLine(m, '')),
          '',
        ];
        writeFileSync(file, `${readFileSync(file, 'utf8')}\n${section.join('\n')}`);
        await rig.proc.reload();
      },
      policyOnDevice: {
        rows: HAPROXY_CFG_ROWS,
        fields: async (name) => backendFields(readFileSync(configPath(rig.paths), 'utf8'), name),
        edit: async (name, fields) => {
          // Edited in the file and reloaded, as an admin would.
          const file = configPath(rig.paths);
          writeFileSync(file, editBackend(readFileSync(file, 'utf8'), name, fields));
          await rig.proc.reload();
        },
      },
      close: async () => {
        for (const f of cleanups) await f();
      },
    };
  },
  haproxyMissing(),
);
