/**
 * What the BIG-IP adapter refuses before rendering a change, by name (never sent otherwise): a
 * certificate AS3 or a client would refuse, a placement it does not apply (an Avi SE group,
 * HAProxy's frontend settings), a client filter that is not a CIDR, a route an endpoint policy
 * cannot say, and HTTP/2. Pure.
 */
import type { Change } from '../../src/adapter/changes.ts';
import { certificateProblem } from './certificates.ts';
import { routeProblem } from './http-policy.ts';
import { sourceRangeProblem } from './source-ranges.ts';

/** A placement it does not apply (an Avi SE group): refused, never ignored. */
const placementRefused = (what: string): string =>
  `${what} (LoadBalancerParameters) is not applied by the BIG-IP adapter (Capabilities.parameters)`;
/** HTTP/2 (GRPCRoute, h2c members) is not in its capabilities: refused, never sent as HTTP/1.1. */
const HTTP2_REFUSED =
  'HTTP/2 (from clients, or h2c to members) is not served by the BIG-IP adapter (Capabilities.http.http2)';

export function preflightProblem(c: Change): string | undefined {
  if (c.op === 'delete') return undefined;
  if (c.kind === 'certificate') return certificateProblem(c.desired);
  if (c.kind === 'pool') return c.desired.backendProtocol ? HTTP2_REFUSED : undefined;
  const vs = c.desired;
  if (vs.placement?.serviceEngineGroup) return placementRefused('a Service Engine group');
  if (vs.placement?.frontend) return placementRefused("HAProxy's frontend settings");
  if (vs.kind === 'l4') return sourceRangeProblem(vs);
  if (vs.http2) return HTTP2_REFUSED;
  return vs.routes.map(routeProblem).find(Boolean);
}
