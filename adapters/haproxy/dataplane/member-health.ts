/**
 * Each member of our backends as HAProxy's checks see it, from the Data Plane API's runtime
 * servers endpoint (8 backends read at a time). v3 says whether a check is configured
 * (`check_state`); v2 does not, so there an unchecked server reads `up`.
 */
import PQueue from 'p-queue';
import type { MemberHealth } from '../../../src/adapter/contract.ts';
import { checkStatusName } from '../server-state.ts';
import type { DataplaneClient } from './client.ts';
import { ownerOf } from './layout.ts';
import { loopOf } from './tls-loop.ts';

export async function membersHealth(client: DataplaneClient, owner: string): Promise<MemberHealth[]> {
  // A Mixed port's loop (tls-loop.ts) is no pool: its one server is HAProxy's own socket.
  const backends = (await client.backends()).filter(
    (b) => ownerOf(b) === owner && loopOf(b.description) === undefined,
  );
  const q = new PQueue({ concurrency: 8 });
  const lists = await Promise.all(
    backends.map((b) => q.add(async () => ({ pool: b.name, servers: await client.runtimeServers(b.name) }))),
  );
  return lists.flatMap(({ pool, servers }) =>
    servers.flatMap((s): MemberHealth[] => {
      if (!s.address || !s.port) return [];
      const checked = s.check_state == null || (s.check_state & 0x02) !== 0;
      return [
        {
          pool,
          address: s.address,
          port: s.port,
          admin:
            s.admin_state === 'maint'
              ? 'maint'
              : s.admin_state === 'drain' || s.iweight === 0
                ? 'draining'
                : 'enabled',
          health: s.operational_state === 'down' ? 'down' : checked ? 'up' : 'unchecked',
          ...(s.check_status != null && checked ? { reason: checkStatusName(s.check_status) } : {}),
        },
      ];
    }),
  );
}
