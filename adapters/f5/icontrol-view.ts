/**
 * The BIG-IP's read-only iControl REST view of a pool's members (/mgmt/tm/ltm/pool/~t~a~p/members:
 * address:port, `session`, `state` from the monitor), read as member health. (The simulator
 * serves that view with code of its own: sim/f5/icontrol.ts.)
 */
import { z } from 'zod';
import PQueue from 'p-queue';
import type { MemberHealth } from '../../src/adapter/contract.ts';
import { type BigIpClient, F5Error } from './client.ts';
import { APP, type Json, parseDeclaration, poolApp } from './declaration.ts';
import { splitByTenant } from './tenant-layout.ts';

/** The read-only pool members collection, as far as the adapter reads it. */
const membersSchema = z.looseObject({
  items: z
    .array(
      z.looseObject({
        name: z.string(),
        address: z.string().optional(),
        session: z.string().optional(),
        state: z.string().optional(),
      }),
    )
    .optional(),
});

const HEALTH: Record<string, MemberHealth['health']> = {
  up: 'up',
  down: 'down',
  'user-down': 'down',
  unchecked: 'unchecked',
};

/** A pool's members as member health (`state` up/down/unchecked/checking/user-down, `session`). */
export function readPoolMembers(pool: string, body: unknown): MemberHealth[] | undefined {
  const parsed = membersSchema.safeParse(body);
  if (!parsed.success) return undefined;
  return (parsed.data.items ?? []).map((m): MemberHealth => {
    const [, address = '', port = '0'] = /^(?:.*\/)?(.+):(\d+)$/.exec(m.name) ?? [];
    return {
      pool,
      address: m.address ?? address,
      port: Number(port),
      admin: m.state === 'user-down' ? 'maint' : m.session === 'user-disabled' ? 'draining' : 'enabled',
      health: HEALTH[m.state ?? ''] ?? 'unknown',
      ...(m.state ? { reason: m.state } : {}),
    };
  });
}

/**
 * Each member of our pools as BIG-IP's monitors see it, from the read-only iControl REST pool
 * members (`state`: up, down, unchecked, checking, user-down; `session`: user-disabled drains),
 * each pool read once from the first tenant holding it (our own first: a partition's copy has the
 * same members, checked alike).
 */
export async function membersHealth(
  client: BigIpClient,
  adc: Json,
  at: { tenant: string; owner: string; perApp: boolean },
): Promise<MemberHealth[]> {
  const o = parseDeclaration(adc, at.tenant, at.owner).owned;
  const byTenant = splitByTenant(
    {
      pools: new Map(o.pools.map((p) => [p.name, p])),
      vss: new Map(o.virtualServices.map((v) => [v.name, v])),
      certs: new Map(),
    },
    at.tenant,
    [],
  );
  const where = new Map<string, string>();
  for (const [t, objects] of byTenant)
    for (const p of objects.pools.keys()) if (!where.has(p)) where.set(p, t);
  const q = new PQueue({ concurrency: 8 });
  const lists = await Promise.all(
    [...where].map(([pool, tenant]) =>
      q.add(async () => {
        const app = at.perApp ? poolApp(pool) : APP;
        const path = `/mgmt/tm/ltm/pool/~${tenant}~${app}~${pool}/members`;
        const m = await client.call('GET', path);
        if (m.status === 404) return [];
        const read = m.status === 200 ? readPoolMembers(pool, m.body) : undefined;
        if (!read) throw new F5Error('Unavailable', `GET ${path} answered ${m.status}`);
        return read;
      }),
    ),
  );
  return lists.flat();
}
