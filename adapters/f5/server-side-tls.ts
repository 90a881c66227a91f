/**
 * Whether an HTTP virtual server on the device speaks to its pools' members as their TLS asks
 * (pool-tls.ts): read from the service's own `clientTLS`, its iRules and the iRule's text, never
 * from our notes. Pure.
 */
import type { Pool, VirtualService } from '../../src/model/types.ts';
import { poolRefs } from '../../src/model/refs.ts';
import { listsIRule } from './as3-text.ts';
import type { Refs } from './app-layout.ts';
import { renderHttpPolicy } from './http-policy.ts';
import { serverSideTls, serverTlsRuleName } from './pool-tls.ts';

type Json = Record<string, unknown>;

/** A virtual server of ours as the device has it (HTTP, or TCP ending TLS), for its server-side TLS. */
export interface Wiring {
  vs: VirtualService;
  o: Json;
  app: Json;
  refs: Refs;
}

/**
 * Whether an HTTP virtual server speaks to its pools' members as their TLS asks: its `clientTLS`
 * and the iRule choosing each pool's profile as they would be written from the pools as they are
 * (none where no pool asks TLS). A rule taken off or edited by hand, or a server-ssl profile put on
 * by hand, is not: its pools are then written again, and it with them.
 */
export function serverSideWired(
  { vs, o, app, refs }: Wiring,
  pools: ReadonlyMap<string, Pool>,
  owner: string,
): boolean {
  const rule = serverTlsRuleName(vs.name);
  const listed = listsIRule(o, rule);
  // Most services send to no TLS pool: nothing to render to know that.
  if (!poolRefs(vs).some((p) => pools.get(p)?.backendTls)) return o.clientTLS === undefined && !listed;
  // Only an HTTP service's weighted rules have pools of their own to draw from.
  const splitFrom = vs.kind === 'l7' ? renderHttpPolicy(vs, owner, refs.pool, pools).splitFrom : new Map();
  const want = serverSideTls(vs, pools, splitFrom, refs.paths(vs.name));
  if (!want) return o.clientTLS === undefined && !listed;
  const text = (app[rule] as Json | undefined)?.iRule;
  return o.clientTLS === want.clientTLS && listed && text === want.iRule;
}
