/**
 * The two ends of what HTTP routes may carry (Capabilities.http): Ingress-style routes only (host,
 * path Prefix/Exact/ImplementationSpecific; what an adapter that says nothing gets), and every
 * match, filter and split of the model.
 */
import type { HttpCapabilities } from './contract.ts';

export const INGRESS_HTTP: HttpCapabilities = {
  pathTypes: ['Prefix', 'Exact', 'ImplementationSpecific'],
  headerMatches: false,
  queryMatches: false,
  methodMatches: false,
  headerModifiers: false,
  redirects: false,
  rewrites: false,
  weights: false,
};

export const ALL_HTTP: HttpCapabilities = {
  pathTypes: ['Prefix', 'Exact', 'ImplementationSpecific', 'RegularExpression'],
  headerMatches: true,
  regexMatches: true,
  queryMatches: true,
  methodMatches: true,
  headerModifiers: true,
  redirects: true,
  rewrites: true,
  weights: true,
};
