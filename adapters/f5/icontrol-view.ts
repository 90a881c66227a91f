/**
 * The read-only iControl REST view of what AS3 declarations built, as the BIG-IP simulator serves
 * it: /mgmt/tm/ltm/pool items and each pool's members (address:port, session, state from the
 * monitor, description, metadata), and the members read back as health by the adapter. Pure:
 * the monitor's results are passed in.
 */
import { z } from 'zod';
import type { MemberHealth } from '../../src/adapter/contract.ts';

type Json = Record<string, unknown>;

const TENANT_PROPS = new Set([
  'class',
  'label',
  'remark',
  'enable',
  'defaultRouteDomain',
  'constants',
  'controls',
  'optimisticLockKey',
]);

/** A member's monitor result as the simulator's monitor has it (absent: not monitored yet). */
export type MonitorState = (address: string, port: number) => 'up' | 'down' | 'unknown' | undefined;

export function icontrolPools(
  tenants: Map<string, Json>,
  monitor: MonitorState = () => undefined,
): { item: Json; members: Json[] }[] {
  const out: { item: Json; members: Json[] }[] = [];
  for (const [tName, t] of tenants) {
    for (const [aName, a] of Object.entries(t)) {
      if (TENANT_PROPS.has(aName) || (a as Json | null)?.class !== 'Application') continue;
      for (const [name, raw] of Object.entries(a as Json)) {
        const p = raw as Json | null;
        if (p?.class !== 'Pool') continue;
        const fullPath = `/${tName}/${aName}/${name}`;
        const monitors = ((p.monitors ?? []) as unknown[]).map((m) =>
          typeof m === 'string' ? `/Common/${m}` : String((m as Json).bigip ?? (m as Json).use),
        );
        out.push({
          item: {
            kind: 'tm:ltm:pool:poolstate',
            name,
            partition: tName,
            subPath: aName,
            fullPath,
            loadBalancingMode: p.loadBalancingMode ?? 'round-robin',
            monitor: monitors.join(' and '),
            description: p.remark,
            membersReference: {
              link: `https://localhost/mgmt/tm/ltm/pool/${fullPath.replaceAll('/', '~')}/members`,
            },
          },
          members: ((p.members ?? []) as Json[]).flatMap((m) =>
            ((m.serverAddresses ?? []) as string[]).map((address) => ({
              kind: 'tm:ltm:pool:members:membersstate',
              name: `${address}:${String(m.servicePort)}`,
              partition: tName,
              fullPath: `/${tName}/${address}:${String(m.servicePort)}`,
              address,
              session: m.adminState === 'disable' || m.enable === false ? 'user-disabled' : 'monitor-enabled',
              state:
                m.adminState === 'offline'
                  ? 'user-down'
                  : monitors.length === 0
                    ? 'unchecked'
                    : ({ up: 'up', down: 'down', unknown: 'checking' } as const)[
                        monitor(address, Number(m.servicePort)) ?? 'unknown'
                      ],
              description: m.remark,
              metadata: Object.entries((m.metadata ?? {}) as Record<string, { value: string }>).map(
                ([k, v]) => ({ name: k, value: v.value, persist: 'true' }),
              ),
            })),
          ),
        });
      }
    }
  }
  return out;
}

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
