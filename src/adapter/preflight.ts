/**
 * The checks every adapter makes before it renders a change, in one place: a placement field it
 * does not apply, HTTP/2, TLS to members or client certificates where it does not declare them
 * (refused by name, terminal: never run somewhere else, spoken in clear text or served
 * unchecked), and a virtual service whose pool or certificate is not
 * on the device (not terminal: it applies once they are). Pure.
 */
import type { Capabilities } from './contract.ts';
import type { Change } from './changes.ts';
import type { ApplyError } from './contract.ts';
import type { Pool, VirtualService } from '../model/types.ts';
import { certificateRefs, poolRefs } from '../model/refs.ts';

const refuse = (message: string): ApplyError => ({ code: 'Unsupported', message, terminal: true });

/** What of a pool its capabilities cannot express. */
function poolProblem(p: Pool, caps: Capabilities, adapter: string): ApplyError | undefined {
  if (p.backendProtocol && caps.http?.http2 !== true)
    return refuse(
      `HTTP/2 to members (h2c) is not served by the ${adapter} adapter (Capabilities.http.http2)`,
    );
  if (p.backendTls && !caps.http?.backendTls)
    return refuse(`TLS to members is not served by the ${adapter} adapter (Capabilities.http.backendTls)`);
  if (p.backendTls?.clientCertificate && !caps.http?.backendTls?.clientCertificates)
    return refuse(
      `a client certificate to members is not presented by the ${adapter} adapter (Capabilities.http.backendTls.clientCertificates)`,
    );
  const retry = caps.http?.retry;
  const status = retry && p.retryStatuses?.find((s) => !retry.statuses.includes(s));
  if (p.retryStatuses && (!retry || status !== undefined || (retry.needsStatuses && !p.retryStatuses.length)))
    return refuse(
      `a route's retries${status !== undefined ? ` on ${status}` : ''} are not made by the ${adapter} adapter (Capabilities.http.retry)`,
    );
  const which = sessionProblem(p.sessionCookie, caps.http?.sessionCookie);
  if (which !== undefined)
    return refuse(
      `a route's session cookie${which} is not kept by the ${adapter} adapter (Capabilities.http.sessionCookie)`,
    );
  return undefined;
}

/** What of a route's session cookie the device cannot keep, as words after "session cookie" (undefined: none). */
function sessionProblem(
  c: Pool['sessionCookie'],
  session: NonNullable<Capabilities['http']>['sessionCookie'],
): string | undefined {
  if (!c) return undefined;
  if (!session) return '';
  const seconds = c.absoluteSeconds;
  if ((seconds && !session.absoluteTimeout) || (c.permanent && !session.permanent)) return ' with a lifetime';
  if (!c.permanent && !session.browserSession) return " for the browser's session (no expiry)";
  if (!c.permanent && seconds && !session.browserSessionTimeout)
    return " for the browser's session with a lifetime";
  const step = session.timeoutStepSeconds;
  const max = session.maxTimeoutSeconds;
  if (seconds && ((step && seconds % step !== 0) || (max && seconds > max))) return ` of ${seconds}s`;
  return undefined;
}

/** What of a change its capabilities cannot express (`adapter`: its name in the message). */
export function capabilityProblem(c: Change, caps: Capabilities, adapter: string): ApplyError | undefined {
  if (c.op === 'delete' || c.kind === 'certificate') return undefined;
  const http2 = caps.http?.http2 === true;
  if (c.kind === 'pool') return poolProblem(c.desired, caps, adapter);
  const vs = c.desired;
  const field = Object.keys(vs.placement ?? {}).find((f) => !caps.parameters?.applies.includes(f));
  if (field)
    return refuse(
      `${field} (LoadBalancerParameters) is not applied by the ${adapter} adapter (Capabilities.parameters; virtual service ${vs.name})`,
    );
  if (vs.kind === 'l4' && vs.certificates && !caps.tlsTerminate)
    return refuse(
      `TLS termination on a TLS listener is not served by the ${adapter} adapter (Capabilities.tlsTerminate)`,
    );
  if (vs.kind === 'l4' && vs.certificates && vs.sni?.some((r) => r.passthrough) && !caps.tlsMixed)
    return refuse(
      `TLS listeners of both modes on one port (Mixed) are not served by the ${adapter} adapter (Capabilities.tlsMixed)`,
    );
  if (vs.kind === 'l7' && vs.http2 && !http2)
    return refuse(`HTTP/2 from clients is not served by the ${adapter} adapter (Capabilities.http.http2)`);
  if (vs.kind === 'l7' && vs.clientValidation && !caps.http?.clientValidation)
    return refuse(
      `client certificate validation is not served by the ${adapter} adapter (Capabilities.http.clientValidation)`,
    );
  if (
    vs.kind === 'l7' &&
    vs.hostClientValidation &&
    !(caps.http?.clientValidationByHost && caps.http.misdirectedRequests)
  )
    return refuse(
      `client certificates for some hosts alone are not served by the ${adapter} adapter (Capabilities.http.clientValidationByHost)`,
    );
  if (vs.kind === 'l7' && vs.clientValidation?.subjectHeader && !caps.http?.clientSubjectHeader)
    return refuse(
      `a verified client's subject is not sent to members by the ${adapter} adapter (Capabilities.http.clientSubjectHeader)`,
    );
  return undefined;
}

/**
 * The first of a virtual service's pools, then certificates, not on the device (`has`: the device
 * after the batch's other changes), or nothing.
 */
export function missingDependency(
  vs: VirtualService,
  has: { pool(name: string): boolean; certificate?(name: string): boolean },
): { kind: 'pool' | 'certificate'; name: string } | undefined {
  const pool = poolRefs(vs).find((p) => !has.pool(p));
  if (pool) return { kind: 'pool', name: pool };
  const cert = has.certificate ? certificateRefs(vs).find((x) => !has.certificate!(x)) : undefined;
  return cert ? { kind: 'certificate', name: cert } : undefined;
}

/**
 * A virtual service whose pool or certificate is not on the device waits for it: DependencyFailed,
 * not terminal (it applies once they are). Every adapter's rule, in one place.
 */
export function dependencyProblem(
  vs: VirtualService,
  has: { pool(name: string): boolean; certificate?(name: string): boolean },
): ApplyError | undefined {
  const missing = missingDependency(vs, has);
  return missing
    ? {
        code: 'DependencyFailed',
        message: `its ${missing.kind} ${missing.name} is not on the device`,
        terminal: false,
      }
    : undefined;
}
