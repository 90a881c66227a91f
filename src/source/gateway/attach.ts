/**
 * Route attachment: which listeners of which of our Gateways a route's parentRefs reach, and the
 * Accepted condition of each parent as the spec reasons it (NoMatchingParent, NotAllowedByListeners,
 * NoMatchingListenerHostname). parentRefs to Gateways that are not ours are left alone: their
 * controller answers for them. Pure.
 */
import {
  GATEWAY_GROUP,
  type LabelSelector,
  type ParentReference,
  type RouteKindName,
} from '../../kube/gateway-objects.ts';
import { cond, type ConditionSpec } from './conditions.ts';
import { effectiveHostnames, isolatedHosts } from './hostnames.ts';
import type { ListenerState } from './listeners.ts';

export interface RouteHead {
  kind: RouteKindName;
  namespace: string;
  name: string;
  hostnames: readonly string[];
  parentRefs: readonly ParentReference[];
}

export interface GatewayListeners {
  /** namespace/name */
  key: string;
  namespace: string;
  name: string;
  listeners: ListenerState[];
}

export interface ListenerAttachment {
  state: ListenerState;
  /** The hosts the route is served for on this listener ('' any). */
  hosts: string[];
}

export interface ParentAttachment {
  parentRef: ParentReference;
  gateway: GatewayListeners;
  accepted: ConditionSpec;
  listeners: ListenerAttachment[];
}

/** Namespace labels by name, for allowedRoutes.namespaces.from: Selector. */
export type NamespaceLabels = (namespace: string) => Record<string, string> | undefined;

export function labelsMatch(sel: LabelSelector | undefined, labels: Record<string, string>): boolean {
  if (!sel) return false;
  for (const [k, v] of Object.entries(sel.matchLabels)) if (labels[k] !== v) return false;
  for (const e of sel.matchExpressions) {
    const has = Object.hasOwn(labels, e.key);
    const ok =
      e.operator === 'In'
        ? has && e.values.includes(labels[e.key]!)
        : e.operator === 'NotIn'
          ? !has || !e.values.includes(labels[e.key]!)
          : e.operator === 'Exists'
            ? has
            : e.operator === 'DoesNotExist'
              ? !has
              : false;
    if (!ok) return false;
  }
  return true;
}

function allowed(
  l: ListenerState,
  route: RouteHead,
  gwNamespace: string,
  nsLabels: NamespaceLabels,
): boolean {
  if (!l.supportedKinds.some((k) => k.kind === route.kind)) return false;
  const from = l.listener.allowedRoutes.namespaces;
  if (from.from === 'All') return true;
  if (from.from === 'Same') return route.namespace === gwNamespace;
  const labels = nsLabels(route.namespace);
  return labels !== undefined && labelsMatch(from.selector, labels);
}

export function attachRoute(
  route: RouteHead,
  gateways: ReadonlyMap<string, GatewayListeners>,
  nsLabels: NamespaceLabels,
): ParentAttachment[] {
  const out: ParentAttachment[] = [];
  for (const ref of route.parentRefs) {
    if (ref.group !== GATEWAY_GROUP || ref.kind !== 'Gateway') continue;
    const gw = gateways.get(`${ref.namespace ?? route.namespace}/${ref.name}`);
    if (!gw) continue;
    const named = gw.listeners.filter(
      (l) =>
        (ref.sectionName === undefined || l.listener.name === ref.sectionName) &&
        (ref.port === undefined || l.listener.port === ref.port),
    );
    const base = { parentRef: ref, gateway: gw, listeners: [] as ListenerAttachment[] };
    if (named.length === 0) {
      const what = [
        ref.sectionName !== undefined ? `named ${ref.sectionName}` : '',
        ref.port !== undefined ? `on port ${ref.port}` : '',
      ]
        .filter(Boolean)
        .join(' ');
      out.push({
        ...base,
        accepted: cond('Accepted', false, 'NoMatchingParent', `Gateway ${gw.key} has no listener ${what}`),
      });
      continue;
    }
    const open = named.filter((l) => l.attachable && allowed(l, route, gw.namespace, nsLabels));
    if (open.length === 0) {
      out.push({
        ...base,
        accepted: cond(
          'Accepted',
          false,
          'NotAllowedByListeners',
          `no listener of Gateway ${gw.key} that this parentRef names allows a ${route.kind} from namespace ${route.namespace}`,
        ),
      });
      continue;
    }
    const hostnamed = route.kind === 'TCPRoute' || route.kind === 'UDPRoute';
    const listeners = open
      .map((state) => ({
        state,
        hosts: hostnamed ? [''] : effectiveHostnames(state.listener.hostname, route.hostnames),
      }))
      .filter((a) => a.hosts.length > 0);
    if (listeners.length === 0) {
      out.push({
        ...base,
        accepted: cond(
          'Accepted',
          false,
          'NoMatchingListenerHostname',
          `no hostname of the route (${route.hostnames.join(', ')}) meets a listener's hostname`,
        ),
      });
      continue;
    }
    for (const a of listeners) a.state.attached.add(`${route.kind} ${route.namespace}/${route.name}`);
    // Attached (and counted) as the hostnames intersect; served only for the hosts no more
    // specific listener on its port takes (listener isolation).
    const served = listeners.map((a) => ({
      ...a,
      hosts: hostnamed
        ? a.hosts
        : isolatedHosts(
            a.hosts,
            a.state.listener.hostname,
            gw.listeners
              .filter((l) => l !== a.state && l.listener.port === a.state.listener.port)
              .map((l) => l.listener.hostname),
          ),
    }));
    out.push({ ...base, listeners: served, accepted: cond('Accepted', true, 'Accepted') });
  }
  return out;
}
