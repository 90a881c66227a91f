/**
 * HTTP-like routes (the route kinds with rules, route-kinds.ts) on our Gateways: attached to their
 * listeners, their rules built (each kind's semantics file), refused where the load balancer lacks a feature, and placed
 * on each listener's hosts by virtual service, with each route's status per parent. Pure.
 */
import type { HttpCapabilities } from '../../adapter/contract.ts';
import type { Gateway, ParentReference, ReferenceGrant, RouteKindName } from '../../kube/gateway-objects.ts';
import type { Service } from '../../kube/objects.ts';
import { gatewayVsName } from '../../model/names.ts';
import { routeLacks } from '../route-support.ts';
import { attachRoute, type GatewayListeners, type ParentAttachment } from './attach.ts';
import { cond } from './conditions.ts';
import type { HttpRuleResult, RouteTemplate, RuleContext } from './http-rules.ts';
import type { Ranked } from './precedence.ts';
import type { GatewayResult, RouteParentStatus } from './results.ts';

type ServicePort = Service['spec']['ports'][number];

/** What of the Gateway source's context placing routes reads. */
export interface L7RouteContext {
  cluster: string;
  adapter: string;
  http: HttpCapabilities;
  grants?: readonly ReferenceGrant[];
  services: Pick<ReadonlyMap<string, Service>, 'get'>;
  poolFor: (svc: Service, port: ServicePort) => string;
  h2PoolFor?: ((svc: Service, port: ServicePort) => string) | undefined;
  tlsPoolFor?: RuleContext['tlsPoolFor'];
  variantPoolFor?: RuleContext['variantPoolFor'];
}

const key = (m: { namespace: string; name: string }): string => `${m.namespace}/${m.name}`;

/** What placement reads of an L7 route object; its rules are its kind's to read. */
interface L7RouteObject {
  metadata: { namespace: string; name: string; creationTimestamp?: string | undefined; generation: number };
  spec: { hostnames: string[]; parentRefs: ParentReference[] };
}

type Built = { rules: HttpRuleResult; unsupported: string | undefined };

/**
 * A route's rules, built once per certificate its parents' Gateways present to TLS members (nearly
 * always one): a TLS pool presenting a certificate is a pool of its own. With what of them the
 * device cannot serve (`unsupported`).
 */
function rulesByCertificate<R extends L7RouteObject>(
  r: R,
  rulesOf: (r: R, c: RuleContext) => HttpRuleResult,
  ctx: L7RouteContext,
  backendTlsOf: RuleContext['backendTlsOf'],
): { of: (clientCertificate: string | undefined) => Built; any: () => Built } {
  const built = new Map<string, Built>();
  const rulesFor = (clientCertificate: string | undefined): Built => {
    const k = clientCertificate ?? '';
    let b = built.get(k);
    if (!b) {
      const rules = rulesOf(r, {
        services: ctx.services,
        grants: ctx.grants ?? [],
        poolFor: ctx.poolFor,
        h2PoolFor: ctx.h2PoolFor,
        tlsPoolFor: ctx.tlsPoolFor,
        variantPoolFor: ctx.variantPoolFor,
        device: { http: ctx.http, adapter: ctx.adapter },
        backendTlsOf,
        clientCertificate,
      });
      const lacking = rules.templates.map((t) => routeLacks({ ...t, host: '' }, ctx.http)).find(Boolean);
      b = {
        rules,
        unsupported:
          rules.unsupported ?? (lacking && `the ${ctx.adapter} load balancer does not support ${lacking}`),
      };
      built.set(k, b);
    }
    return b;
  };
  return { of: rulesFor, any: () => built.values().next().value ?? rulesFor(undefined) };
}

/** A route's rules on the hosts of each programmable listener of one parent, by virtual service. */
function placeOnListeners(
  r: L7RouteObject,
  p: ParentAttachment,
  templates: readonly RouteTemplate[],
  cluster: string,
  byVs: Map<string, Ranked[]>,
): void {
  for (const a of p.listeners) {
    if (!a.state.programmable) continue;
    const l = a.state.listener;
    const vs = gatewayVsName(cluster, p.gateway, l.protocol, l.port);
    const list = byVs.get(vs) ?? [];
    for (const t of templates) {
      const { rule, match, ...route } = t;
      for (const host of a.hosts)
        list.push({
          route: { ...route, host },
          created: r.metadata.creationTimestamp ?? '',
          key: key(r.metadata),
          rule,
          match,
        });
    }
    byVs.set(vs, list);
  }
}

/**
 * HTTP-like routes of one kind attached to our Gateways: each one's status per parent,
 * and its rules placed on the hosts of each listener it attached to, by virtual service.
 */
export function placeL7Routes<R extends L7RouteObject>(
  kind: RouteKindName,
  objects: R[],
  rulesOf: (r: R, c: RuleContext) => HttpRuleResult,
  ctx: L7RouteContext,
  at: {
    gws: Map<string, GatewayListeners & { gateway: Gateway }>;
    /** The ListenerSets of our Gateways, as parents (attach.ts). */
    sets?: ReadonlyMap<string, GatewayListeners>;
    nsOf: (ns: string) => Record<string, string> | undefined;
    byVs: Map<string, Ranked[]>;
    out: GatewayResult;
    /** The BackendTLSPolicy over a Service port (backend-tls.ts), and the Gateways each was hit on. */
    backendTlsOf?: RuleContext['backendTlsOf'];
    tlsHits?: Map<string, Set<string>>;
    /** The certificate (by name) a Gateway (namespace/name) presents to its TLS members; none when absent. */
    clientCertificateOf?: (gatewayKey: string) => string | undefined;
  },
): void {
  const routes = [...objects].sort((a, b) => (key(a.metadata) < key(b.metadata) ? -1 : 1));
  for (const r of routes) {
    const head = {
      kind,
      namespace: r.metadata.namespace,
      name: r.metadata.name,
      hostnames: r.spec.hostnames,
      parentRefs: r.spec.parentRefs,
    };
    const parents = attachRoute(head, at.gws, at.nsOf, at.sets);
    if (parents.length === 0) continue;
    const byCert = rulesByCertificate(r, rulesOf, ctx, at.backendTlsOf);
    // Built for the parents that take the route; one that does not reads any (its status needs the
    // backendRefs judged, which no certificate changes), so no pool is asked for it alone.
    const certOf = (p: (typeof parents)[number]) => at.clientCertificateOf?.(p.gateway.key);
    for (const p of parents) if (p.accepted.status) byCert.of(certOf(p));
    const any = byCert.any();
    const statuses: RouteParentStatus[] = [];
    for (const p of parents) {
      const { rules, unsupported } = p.accepted.status ? byCert.of(certOf(p)) : any;
      const accepted =
        p.accepted.status && unsupported
          ? cond('Accepted', false, 'UnsupportedValue', unsupported)
          : p.accepted;
      statuses.push({ parentRef: p.parentRef, conditions: [accepted, rules.resolvedRefs] });
      for (const policy of rules.tlsPolicies)
        at.tlsHits?.set(policy, (at.tlsHits.get(policy) ?? new Set()).add(p.gateway.key));
      if (!accepted.status) continue;
      for (const b of rules.backends) at.out.backends.add(b);
      placeOnListeners(r, p, rules.templates, ctx.cluster, at.byVs);
    }
    at.out.routes.set(`${kind} ${key(r.metadata)}`, { generation: r.metadata.generation, parents: statuses });
  }
}
