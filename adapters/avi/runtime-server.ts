/**
 * A pool's runtime server status (GET /api/pool/{uuid}/runtime/server) read as member health.
 * Pure. (The simulator answers it with code of its own: sim/avi/runtime-servers.ts.)
 */
import PQueue from 'p-queue';
import { z } from 'zod';
import { createdBy, ownedBy } from './objects.ts';
import { AviError, type AviSession, errorText } from './session.ts';
import type { MemberHealth } from '../../src/adapter/contract.ts';

/** What the answer holds, as far as we read it. */
const runtimeServersSchema = z.array(
  z.looseObject({
    server_ip: z.looseObject({ addr: z.string() }),
    port: z.number().int(),
    oper_status: z.looseObject({ state: z.string(), reason: z.array(z.string()).optional() }),
  }),
);

/** The pool's servers as member health, or why the answer could not be read. */
export function readRuntimeServers(pool: string, body: unknown): MemberHealth[] | { error: string } {
  const parsed = runtimeServersSchema.safeParse(body);
  if (!parsed.success) return { error: `pool ${pool} runtime: ${parsed.error.issues[0]?.message}` };
  return parsed.data.map((s): MemberHealth => {
    const state = s.oper_status.state;
    return {
      pool,
      address: s.server_ip.addr,
      port: s.port,
      admin: state === 'OPER_DISABLED' ? 'draining' : 'enabled',
      // A disabled server is not monitored: its health is unknown, not down.
      health: state === 'OPER_UP' ? 'up' : state === 'OPER_DOWN' ? 'down' : 'unknown',
      ...(s.oper_status.reason?.length ? { reason: s.oper_status.reason.join('; ') } : {}),
    };
  });
}

/** Each server of our pools as Avi's health monitors see it (8 pools read at a time). */
export async function poolsHealth(
  session: AviSession,
  owner: string,
  /** These pools alone, as the adapter holds them (name and uuid); undefined: all of ours, listed. */
  only?: readonly { name: unknown; uuid: unknown }[],
): Promise<MemberHealth[]> {
  const pools =
    only ??
    (await session.list('pool', `&created_by=${encodeURIComponent(createdBy(owner))}`)).filter((p) =>
      ownedBy('pool', p, owner),
    );
  const q = new PQueue({ concurrency: 8 });
  const lists = await Promise.all(
    pools.map((p) =>
      q.add(async () => {
        const r = await session.call('GET', `/api/pool/${String(p.uuid)}/runtime/server`);
        if (r.status !== 200)
          throw new AviError(
            r.status,
            `GET /api/pool/${String(p.uuid)}/runtime/server: ${errorText(r.body)}`,
          );
        const read = readRuntimeServers(String(p.name), r.body);
        if ('error' in read) throw new AviError(r.status, read.error);
        return read;
      }),
    ),
  );
  return lists.flat();
}
