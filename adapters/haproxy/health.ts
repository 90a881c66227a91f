/**
 * The health of our pools' members as HAProxy reports it (`show servers state`), for the runtime
 * transport: read-only, off the write path.
 */
import { readFileSync } from 'node:fs';
import type { MemberHealth } from '../../src/adapter/contract.ts';
import { parseConfig } from './config-parse.ts';
import { socketCommand } from './process.ts';
import { parseServersState, rowHealth } from './server-state.ts';

export async function memberHealth(
  configFile: string,
  adminSocket: string,
  owner: string,
): Promise<MemberHealth[]> {
  let text: string;
  try {
    text = readFileSync(configFile, 'utf8');
  } catch {
    return [];
  }
  const owned = new Set(parseConfig(text, owner).owned.pools.map((p) => p.name));
  const rows = parseServersState(await socketCommand(adminSocket, 'show servers state'));
  return rows
    .filter((r) => owned.has(r.backend))
    .map((r) => ({ pool: r.backend, address: r.address, port: r.port, ...rowHealth(r) }));
}
