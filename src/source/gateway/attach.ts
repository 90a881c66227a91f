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
  /** namespace/name of the Gateway whose VIP serves these listeners. */
  key: string;
  namespace: string;
  name: string;
  /** The listeners a parentRef to it reaches: a Gateway's own, or a ListenerSet's. */
  listeners: ListenerState[];
  /** Every listener the Gateway's VIP serves (its own and its ListenerSets'): isolation reads them. */
  merged?: ListenerState[];
  /** Set for a ListenerSet: its namespace (allowedRoutes `Same`) and `ListenerSet ns/name` (messages). */
  set?: { namespace: string; label: string; refused?: string | undefined };
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
  /** The namespace of the listener's own object (a Gateway, a ListenerSet). */
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

/** A listener's hosts but those a more specific listener of its port takes (of every listener the VIP serves). */
const isolated = (a: ListenerAttachment, gw: GatewayListeners): string[] =>
  isolatedHosts(
    a.hosts,
    a.state.listener.hostname,
    (gw.merged ?? gw.listeners)
      .filter((l) => l !== a.state && l.listener.port === a.state.listener.port)
      .map((l) => l.listener.hostname),
  );

/** What a parentRef names that no listener matches: `named x on port n`. */
const namedWhat = (ref: ParentReference): string =>
  [
    ref.sectionName !== undefined ? `named ${ref.sectionName}` : '',
    ref.port !== undefined ? `on port ${ref.port}` : '',
  ]
    .filter(Boolean)
    .join(' ');

/**
 * `sets`: the ListenerSets of our Gateways by namespace/name (a parentRef of kind ListenerSet
 * reaches that set's listeners alone; one of kind Gateway, the Gateway's own alone: GEP-1713).
 */
export function attachRoute(
  route: RouteHead,
  gateways: ReadonlyMap<string, GatewayListeners>,
  nsLabels: NamespaceLabels,
  sets: ReadonlyMap<string, GatewayListeners> = new Map(),
): ParentAttachment[] {
  const out: ParentAttachment[] = [];
  for (const ref of route.parentRefs) {
    if (ref.group !== GATEWAY_GROUP) continue;
    const parents = ref.kind === 'Gateway' ? gateways : ref.kind === 'ListenerSet' ? sets : undefined;
    const gw = parents?.get(`${ref.namespace ?? route.namespace}/${ref.name}`);
    if (!gw) continue;
    const label = gw.set?.label ?? `Gateway ${gw.key}`;
    const home = gw.set?.namespace ?? gw.namespace;
    if (gw.set?.refused !== undefined) {
      out.push({
        parentRef: ref,
        gateway: gw,
        listeners: [],
        accepted: cond('Accepted', false, 'NoMatchingParent', `${label} is not accepted: ${gw.set.refused}`),
      });
      continue;
    }
    const named = gw.listeners.filter(
      (l) =>
        (ref.sectionName === undefined || l.listener.name === ref.sectionName) &&
        (ref.port === undefined || l.listener.port === ref.port),
    );
    const base = { parentRef: ref, gateway: gw, listeners: [] as ListenerAttachment[] };
    if (named.length === 0) {
      out.push({
        ...base,
        accepted: cond('Accepted', false, 'NoMatchingParent', `${label} has no listener ${namedWhat(ref)}`),
      });
      continue;
    }
    const open = named.filter((l) => l.attachable && allowed(l, route, home, nsLabels));
    if (open.length === 0) {
      out.push({
        ...base,
        accepted: cond(
          'Accepted',
          false,
          'NotAllowedByListeners',
          `no listener of ${label} that this parentRef names allows a ${route.kind} from namespace ${route.namespace}`,
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
    const served = hostnamed ? listeners : listeners.map((a) => ({ ...a, hosts: isolated(a, gw) }));
    out.push({ ...base, listeners: served, accepted: cond('Accepted', true, 'Accepted') });
  }
  return out;
}
