/**
 * What the Avi adapter checks before it writes anything of a change: that the object is ours and
 * an update has something to update, and for a virtual service that Avi can express it (routes a
 * policy set can hold, no BIG-IP or HAProxy placement), that every object rendered passes the
 * bundled field models, and that the pools and certificates it refers to are on the controller.
 * Failures are thrown as device-objects.ts `Failure`s (terminal or retryable).
 */
import { capabilityProblem, dependencyProblem } from '../../src/adapter/preflight.ts';
import { aviCapabilities } from './capabilities.ts';
import type { Change } from '../../src/adapter/changes.ts';
import type { VirtualService } from '../../src/model/types.ts';
import { type AviPlacement, type AviType, ownedBy } from './objects.ts';
import { invalid } from './object-schemas.ts';
import { renderVirtualService } from './vs-objects.ts';
import { parseCertificate } from './certificates.ts';
import { routeProblem } from './http-policy.ts';
import { fail } from './device-objects.ts';

type Raw = Record<string, unknown>;
/** An object of ours as last read or written, by type and name. */
export type Current = (type: AviType, name: string) => Raw | undefined;

/** The checks every change goes through first: ownership, and that an update has something to update. */
export function precheck(c: Change, current: Current, owner: string): void {
  const type: AviType =
    c.kind === 'pool' ? 'pool' : c.kind === 'certificate' ? 'sslkeyandcertificate' : 'virtualservice';
  const cur = current(type, c.name);
  if (cur && !ownedBy(type, cur, owner)) {
    fail(
      'NotOwned',
      `${type} ${c.name} belongs to ${String(cur.created_by ?? 'someone else')}; left alone`,
      true,
    );
  }
  if (c.op === 'update' && !cur)
    fail('NotFound', `${type} ${c.name} is not on the controller; it is created on the next pass`, false);
}

/**
 * A virtual service rendered into Avi objects, once everything above holds: what a policy set
 * cannot express and a placement Avi does not have are refused before anything is written (the
 * core does not send such routes; an adapter still defends itself).
 */
export function renderChecked(
  vs: VirtualService,
  owner: string,
  at: AviPlacement,
  current: Current,
): ReturnType<typeof renderVirtualService> {
  const bad = vs.kind === 'l7' ? vs.routes.map(routeProblem).find(Boolean) : undefined;
  if (bad) fail('Invalid', bad, true);
  // A placement Avi does not apply (another vendor's): refused, never run in the configured place.
  const refused = capabilityProblem(
    { op: 'create', kind: 'virtualService', name: vs.name, desired: vs },
    aviCapabilities(false),
    'Avi',
  );
  if (refused) fail('Unsupported', refused.message, true);
  const sniNames = (cert: string) => {
    const o = current('sslkeyandcertificate', cert);
    return (o && parseCertificate(o)?.sniNames) ?? [];
  };
  const rendered = renderVirtualService(vs, owner, at, sniNames);
  const problems = [
    ...rendered.children.flatMap((p) => invalid(p.type, p.object)),
    ...rendered.services.flatMap((o) => invalid('virtualservice', o)),
  ];
  if (problems.length > 0) fail('Invalid', problems.join('; '), true);
  const dep = dependencyProblem(vs, {
    pool: (p) => current('pool', p) !== undefined,
    certificate: (c) => current('sslkeyandcertificate', c) !== undefined,
  });
  if (dep) fail(dep.code, dep.message, dep.terminal);
  return rendered;
}
