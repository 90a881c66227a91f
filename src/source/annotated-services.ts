/**
 * The Services npl-lb annotates for NodePortLocal: our LoadBalancer Services, the backends of the
 * Ingresses of our classes, and those of the HTTPRoutes on our Gateways. Reference-counted as one:
 * a Service stays annotated while any of them uses it. Pure.
 */
import { type ControllerConfig, namespaceSelected } from '../config/controller-config.ts';
import type { Ingress, IngressBackend, Service } from '../kube/objects.ts';
import { z } from 'zod';
import type { ClusterView } from './view.ts';
import { ingressClassOf, ourIngressClasses, ourLoadBalancer } from './ours.ts';
import {
  GATEWAY_GROUP,
  GATEWAY_ROUTES,
  ROUTE_KEYS,
  type RouteKey,
  httpRouteFilterSchema,
  type RouteObject,
} from '../kube/gateway-objects.ts';
import { servedGatewayView } from './gateway/from-view.ts';
import { ourGateways } from './gateway/gateways.ts';
import { parentOf } from './gateway/listener-sets.ts';
import { referencePermitted } from './gateway/reference-grants.ts';

const key = (m: { namespace: string; name: string }): string => `${m.namespace}/${m.name}`;

type GatewayInputs = 'gatewayClasses' | 'gateways' | 'listenerSets' | RouteKey | 'referenceGrants';

/** Every backend of an Ingress: (service name, port by number or name), default backend included. */
export function ingressBackends(ing: Ingress): { service: string; port: number | string | undefined }[] {
  const out: { service: string; port: number | string | undefined }[] = [];
  const add = (b: IngressBackend | undefined) => {
    if (b?.service) out.push({ service: b.service.name, port: b.service.port.number ?? b.service.port.name });
  };
  add(ing.spec.defaultBackend);
  for (const r of ing.spec.rules) for (const p of r.http?.paths ?? []) add(p.backend);
  return out;
}

/**
 * The Services (namespace/name) HTTPRoutes send to through a Gateway of ours (a Service in another
 * namespace only where a ReferenceGrant allows it).
 */
const FILTERS = z.array(httpRouteFilterSchema);

/** The Services a rule's RequestMirror filters copy requests to (HTTP route kinds). */
function mirrorRefs(rule: RouteObject['spec']['rules'][number]) {
  // The HTTP kinds' rules carry parsed filters; the L4 kinds' none (a stray field reads as none).
  const parsed = FILTERS.safeParse('filters' in rule ? rule.filters : []);
  const filters = parsed.success ? parsed.data : [];
  return filters.flatMap((f) =>
    f.type === 'RequestMirror' && f.requestMirror ? [f.requestMirror.backendRef] : [],
  );
}

function gatewayBackendServices(
  view: Pick<ClusterView, GatewayInputs>,
  cfg: ControllerConfig,
  out: Set<string>,
): void {
  const served = servedGatewayView(view, cfg);
  const routes = ROUTE_KEYS.map(
    (k) => [GATEWAY_ROUTES[k].kind, served[k] as RouteObject[] | undefined] as const,
  );
  if (!routes.some(([, list]) => list?.length)) return;
  const gws = new Set(ourGateways(served, cfg.gatewayController).map((g) => key(g.metadata)));
  // A ListenerSet's routes reach its Gateway's VIP (whether the Gateway allows it is the pass's to judge).
  const sets = new Set(
    (served.listenerSets ?? []).filter((s) => gws.has(parentOf(s) ?? '')).map((s) => key(s.metadata)),
  );
  const ours = (p: { kind: string; namespace?: string | undefined; name: string }, ns: string) =>
    (p.kind === 'Gateway' ? gws : p.kind === 'ListenerSet' ? sets : undefined)?.has(
      `${p.namespace ?? ns}/${p.name}`,
    ) === true;
  for (const [kind, list] of routes)
    for (const r of list ?? []) {
      const ns = r.metadata.namespace;
      if (!r.spec.parentRefs.some((p) => ours(p, ns))) continue;
      for (const rule of r.spec.rules) {
        // A rule's RequestMirror filters send to their Services as its backendRefs do.
        for (const b of [...rule.backendRefs, ...mirrorRefs(rule)]) {
          if (b.group !== '' || b.kind !== 'Service') continue;
          const target = b.namespace ?? ns;
          const from = { group: GATEWAY_GROUP, kind, namespace: ns };
          const to = { group: '', kind: 'Service', namespace: target, name: b.name };
          if (namespaceSelected(cfg, target) && referencePermitted(served.referenceGrants, from, to)) {
            out.add(`${target}/${b.name}`);
          }
        }
      }
    }
}

/**
 * The Services (namespace/name) that back an Ingress of ours or an HTTPRoute on a Gateway of ours;
 * depends on Ingresses, routes and classes only.
 */
export function ingressBackendServices(
  view: Pick<ClusterView, 'ingresses' | 'ingressClasses' | GatewayInputs>,
  cfg: ControllerConfig,
): Set<string> {
  const out = new Set<string>();
  gatewayBackendServices(view, cfg, out);
  const ours = ourIngressClasses(view.ingressClasses, cfg);
  for (const ing of view.ingresses) {
    if (!ingressClassOf(ing, ours, cfg)) continue;
    for (const b of ingressBackends(ing)) out.add(`${ing.metadata.namespace}/${b.service}`);
  }
  return out;
}

/** Whether npl-lb annotates this Service, given the backends of our Ingresses. */
export function wantsAnnotation(svc: Service, backends: Set<string>, cfg: ControllerConfig): boolean {
  if (cfg.serviceType !== 'NodePortLocal' || !cfg.autoAnnotate) return false;
  return ourLoadBalancer(svc, cfg) || backends.has(key(svc.metadata));
}

/** Services npl-lb annotates for NodePortLocal: our LoadBalancer Services and the backends of our Ingresses. */
export function servicesToAnnotate(view: ClusterView, cfg: ControllerConfig): Set<string> {
  const out = new Set<string>();
  if (cfg.serviceType !== 'NodePortLocal' || !cfg.autoAnnotate) return out;
  for (const s of view.services) if (ourLoadBalancer(s, cfg)) out.add(key(s.metadata));
  for (const b of ingressBackendServices(view, cfg)) out.add(b);
  return out;
}
