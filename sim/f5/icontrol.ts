/**
 * The simulated BIG-IP's read-only iControl REST view of what AS3 declarations built, written from
 * iControl REST's documented objects: /mgmt/tm/ltm/pool items and each pool's members
 * (address:port, session, state from the monitor, description, metadata). Pure: the monitor's
 * results are passed in.
 */

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
