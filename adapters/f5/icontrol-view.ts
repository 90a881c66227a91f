/**
 * The BIG-IP's read-only iControl REST view of a pool's members (/mgmt/tm/ltm/pool/~t~a~p/members:
 * address:port, `session`, `state` from the monitor), read as member health. Pure. (The simulator
 * serves that view with code of its own: sim/f5/icontrol.ts.)
 */
import { z } from 'zod';
import type { MemberHealth } from '../../src/adapter/contract.ts';

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
