/**
 * What the BIG-IP adapter refuses before rendering a change, by name (never sent otherwise): a
 * certificate AS3 or a client would refuse, a placement it does not apply (an Avi SE group,
 * HAProxy's frontend settings), a client filter that is not a CIDR, a route an endpoint policy
 * cannot say, and HTTP/2. Pure.
 */
import { capabilityProblem } from '../../src/adapter/preflight.ts';
import { F5_CAPABILITIES } from './capabilities.ts';
import type { Change } from '../../src/adapter/changes.ts';
import { certificateProblem } from './certificates.ts';
import { routeProblem } from './http-policy.ts';
import { sourceRangeProblem } from './source-ranges.ts';
import { HTTP_TOKEN } from './client-tls.ts';

export function preflightProblem(c: Change): string | undefined {
  if (c.op === 'delete') return undefined;
  if (c.kind === 'certificate') return certificateProblem(c.desired);
  // A placement it does not apply, HTTP/2: refused, never run elsewhere or spoken as HTTP/1.1.
  const refused = capabilityProblem(c, F5_CAPABILITIES, 'BIG-IP');
  if (refused) return refused.message;
  if (c.kind === 'pool') return undefined;
  const vs = c.desired;
  if (vs.kind === 'l4') return sourceRangeProblem(vs);
  const header = vs.clientValidation?.subjectHeader;
  if (header !== undefined && !HTTP_TOKEN.test(header))
    return `clientValidation.subjectHeader ${JSON.stringify(header.slice(0, 64))}: not an HTTP token`;
  return vs.routes.map(routeProblem).find(Boolean);
}
