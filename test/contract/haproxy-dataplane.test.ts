import assert from 'node:assert/strict';
import { DataplaneClient } from '../../adapters/haproxy/dataplane/client.ts';
import { backendFor } from '../../adapters/haproxy/dataplane/layout.ts';
import type { ApiVersion } from '../../adapters/haproxy/dataplane/models.ts';
import { runAll, startDataplaneSim } from '../support/dataplane.ts';
import { haproxyMissing } from '../support/haproxy.ts';
import { adapterContract } from './adapter-contract.ts';
import { DATAPLANE_ROWS, dataplaneFields, editDataplane } from '../support/dataplane-policy-fields.ts';

// VIPs are documentation addresses bound `transparent` (root), health checks off: no packet leaves
// loopback. Every request and answer of the suite is checked against the official spec.
for (const apiVersion of ['v2', 'v3'] as ApiVersion[]) {
  adapterContract(
    `haproxy (Data Plane API ${apiVersion}, simulator on a real HAProxy)`,
    async () => {
      const cleanups: (() => Promise<void>)[] = [];
      const rig = await startDataplaneSim({ after: (fn) => void cleanups.push(fn) });
      return {
        adapter: async (owner, o) =>
          rig.adapter(owner, apiVersion, {
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
          // Another owner's backend, made through the API as another controller would.
          const c = new DataplaneClient({ url: rig.url, apiVersion, username: 'admin', password: 'admin' });
          const tx = await c.startTransaction(await c.configVersion());
          const layout = { owner, apiVersion, slots: 1, healthChecks: false, transparentBinds: true };
          await c.putBackend(tx, backendFor(pool, false, layout), false);
          for (const [i, m] of pool.members.entries()) {
            await c.putServer(tx, pool.name, { name: `s${i + 1}`, address: m.address, port: m.port }, false);
          }
          await c.commit(tx);
          await c.close();
        },
        policyOnDevice: {
          rows: DATAPLANE_ROWS,
          fields: async (name) => {
            const c = new DataplaneClient({ url: rig.url, apiVersion, username: 'admin', password: 'admin' });
            try {
              return await dataplaneFields(c, name);
            } finally {
              await c.close();
            }
          },
          edit: async (name, fields) => {
            // Through the API, as an admin's script would.
            const c = new DataplaneClient({ url: rig.url, apiVersion, username: 'admin', password: 'admin' });
            try {
              await editDataplane(c, name, fields);
            } finally {
              await c.close();
            }
          },
        },
        close: async () => {
          // Cleanups run whatever the check does: a failing check never leaves HAProxy behind.
          let problems: string[];
          try {
            problems = rig.specProblems();
          } finally {
            await runAll(cleanups);
          }
          assert.deepEqual(problems, [], 'every exchange conforms to the Data Plane API spec');
        },
      };
    },
    haproxyMissing(),
  );
}
