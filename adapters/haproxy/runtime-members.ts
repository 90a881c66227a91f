/**
 * One pool's members changed at runtime over the admin socket (the runtime transport, no reload):
 * a new member added with its checks and state (the pool's CA bundles loaded first when it had no
 * server yet), one parked from an earlier removal repointed and brought back, one drained or
 * undrained set so, and one gone put in maintenance and deleted, or parked while HAProxy keeps it
 * for connections still attached (parked-servers.ts).
 */
import type { Member, Pool } from '../../src/model/types.ts';
import { checkWords, serverName } from './config.ts';
import type { ParkedServers } from './parked-servers.ts';

/** A member's admin state as HAProxy says it. */
export const adminState = (m: Member): 'ready' | 'drain' => (m.enabled ? 'ready' : 'drain');

export interface MemberCommands {
  /** A runtime command; throws when HAProxy's answer does not match `ok` (default: empty). */
  command: (line: string, ok?: RegExp) => Promise<void>;
  /** `del server`: false while HAProxy keeps the server for connections still attached. */
  tryDelete: (backend: string, server: string) => Promise<boolean>;
  parked: ParkedServers;
  /** Health checks on the servers added (the transport's `healthChecks`). */
  checks: boolean;
  certDir: string;
  /** The pool's CA bundles into HAProxy, before its first server that verifies with them. */
  loadCas: (pool: Pool) => Promise<void>;
}

/**
 * A member's admin state at runtime. Enabled: `ready` and its weight back to 1, since a member
 * that was disabled when the file was last loaded came in with `weight 0` (config.ts), and
 * `ready` alone leaves it at weight 0, serving nothing (a Pod that became Ready just after its
 * pool was made). Disabled: `drain`, its weight left as it is.
 */
export async function setMemberState(
  x: MemberCommands,
  backend: string,
  server: string,
  m: Member,
): Promise<void> {
  await x.command(`set server ${backend}/${server} state ${adminState(m)}`);
  if (m.enabled) await x.command(`set server ${backend}/${server} weight 1`);
}

/** The pool's members from `was` to `next.members`, command by command. */
export async function updateMembers(x: MemberCommands, was: readonly Member[], next: Pool): Promise<void> {
  const name = next.name;
  const before = new Map(was.map((m) => [serverName(m), m]));
  const after = new Map(next.members.map((m) => [serverName(m), m]));
  for (const [s, m] of after) {
    const old = before.get(s);
    const addr = m.address.includes(':') ? `[${m.address}]` : m.address;
    if (!old && x.parked.has(name, s)) {
      // Still in HAProxy from an earlier removal: repoint it and bring it back.
      await x.command(`set server ${name}/${s} addr ${addr} port ${m.port}`, /^$|changed|no need/i);
      await setMemberState(x, name, s, m);
      x.parked.release(name, s);
    } else if (!old) {
      if (before.size === 0) await x.loadCas(next);
      await x.command(
        `add server ${name}/${s} ${addr}:${m.port}${checkWords(next, x.checks, x.certDir)}`,
        /New server registered/,
      );
      if (x.checks) await x.command(`enable health ${name}/${s}`);
      await x.command(`set server ${name}/${s} state ${adminState(m)}`);
    } else if (old.enabled !== m.enabled) {
      await setMemberState(x, name, s, m);
    }
  }
  for (const s of before.keys()) {
    if (after.has(s)) continue;
    await x.command(`set server ${name}/${s} state maint`);
    // A server with connections still open cannot go yet: parked in maintenance, retried.
    if (!(await x.tryDelete(name, s))) x.parked.park(name, s);
  }
}

/**
 * Before a reload: the new worker takes a server's drain and maintenance state from the saved
 * state file, not from the file's weight, so members drained or undrained in this batch, and new
 * ones (which the running worker may have without the file: a refused `add server`), are set at
 * runtime first, and the state saved for the reload is the one wanted.
 */
export async function settleStates(
  command: MemberCommands['command'],
  was: ReadonlyMap<string, Pool>,
  pools: ReadonlyMap<string, Pool>,
): Promise<void> {
  for (const [name, next] of pools) {
    const before = new Map((was.get(name)?.members ?? []).map((m) => [serverName(m), m]));
    for (const m of next.members) {
      const s = serverName(m);
      const old = before.get(s);
      if (old && old.enabled === m.enabled) continue;
      // A server the running worker does not have takes its state from the file anyway.
      await command(`set server ${name}/${s} state ${adminState(m)}`, /^$|No such/i);
    }
  }
}
