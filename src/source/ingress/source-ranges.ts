/**
 * An Ingress's `npl-lb.io/source-ranges`: the client addresses its rules serve, CIDRs separated by
 * commas (IPv4 and IPv6), each in its network form. A value that does not parse, or names nothing,
 * refuses the Ingress's rules whole (fail closed: a filter read in part could let in what its owner
 * meant to keep out), said on the Ingress. Pure.
 */
import { SOURCE_RANGES_ANNOTATION } from '../../kube/annotations.ts';
import { EventReasons } from '../../kube/event-reasons.ts';
import type { Ingress } from '../../kube/objects.ts';
import { ipv4Network, ipv6Network, MAX_INGRESS_SOURCE_RANGES } from '../cidr.ts';
import type { Finding } from '../types.ts';

export function ingressSourceRanges(ing: Ingress, findings: Finding[]): string[] | 'refused' | undefined {
  const v = ing.metadata.annotations[SOURCE_RANGES_ANNOTATION];
  if (v === undefined) return undefined;
  const refuse = (why: string): 'refused' => {
    findings.push({
      kind: 'Ingress',
      key: `${ing.metadata.namespace}/${ing.metadata.name}`,
      type: 'Warning',
      reason: EventReasons.InvalidSourceRange,
      message: `${SOURCE_RANGES_ANNOTATION}: ${why}; its rules are not served until it is fixed`,
    });
    return 'refused';
  };
  const texts = v
    .split(',')
    .map((t) => t.trim())
    .filter(Boolean);
  if (texts.length === 0) return refuse('names no range (remove it to serve every client)');
  if (texts.length > MAX_INGRESS_SOURCE_RANGES)
    return refuse(`${texts.length} ranges, at most ${MAX_INGRESS_SOURCE_RANGES}`);
  const out = new Set<string>();
  for (const t of texts) {
    const n = ipv4Network(t) ?? ipv6Network(t);
    if (!n) return refuse(`${JSON.stringify(t.slice(0, 64))} is not a CIDR`);
    out.add(n);
  }
  return [...out].sort();
}
