/**
 * Who asks for a VIP, as a tagged union: a LoadBalancer Service, an IngressClass of ours (its
 * Ingresses share its VIP) or a Gateway. The sources build it; the VIP allocator keys its work by
 * `requesterKey` (`service/ns/name`, `ingressclass/name`, `gateway/ns/name`, the text its messages
 * name a holder by) and nothing parses that text back. Pure.
 */
export type VipRequester =
  | { kind: 'service'; namespace: string; name: string }
  | { kind: 'ingressclass'; name: string }
  | { kind: 'gateway'; namespace: string; name: string };

export const requesterKey = (r: VipRequester): string =>
  r.kind === 'ingressclass' ? `ingressclass/${r.name}` : `${r.kind}/${r.namespace}/${r.name}`;
