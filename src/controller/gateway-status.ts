/**
 * The status of our GatewayClasses, Gateways and HTTPRoutes as a pass computed it, written where it
 * differs from what the object shows: conditions with observedGeneration (a transition time kept
 * while the status stays), Gateway addresses and listeners, and the route parents of our
 * controller (other controllers' parents are kept as they are). A listener or Gateway whose
 * virtual service the load balancer has not taken is not Programmed. Writes go through a small
 * sink, so unit tests need no API server; a route's write carries its resourceVersion, so a
 * concurrent change by another controller is not overwritten (the next pass writes again).
 */
import type { KubeConfig } from '@kubernetes/client-node';
import {
  type Condition,
  type Gateway,
  type GatewayClass,
  GATEWAY_ROUTES,
  ROUTE_KEYS,
  type RouteLists,
  type RouteObject,
} from '../kube/gateway-objects.ts';
import type { ListenerSet } from '../kube/listener-set-objects.ts';
import { collectionPath, RESOURCES, type ResourceRef } from '../kube/paths.ts';
import { KubeApiError, mergePatch } from '../kube/raw-client.ts';
import { familyName, gatewayVsName } from '../model/names.ts';
import { cond, type ConditionSpec, conditions } from '../source/gateway/conditions.ts';
import type { GatewayResult } from '../source/gateway/gateways.ts';
import type { ListenerStatus } from '../source/gateway/results.ts';
import { same, statusEntries } from './status-entries.ts';

export interface StatusSink {
  patch(ref: ResourceRef, namespace: string, name: string, body: object): Promise<void>;
}

export function kubeStatusSink(kc: KubeConfig): StatusSink {
  return {
    async patch(ref, namespace, name, body) {
      const path = `${collectionPath(ref, namespace || undefined)}/${encodeURIComponent(name)}/status`;
      try {
        await mergePatch(kc, path, body);
      } catch (err) {
        // Gone, or changed meanwhile: the informer brings the new object and the next pass writes.
        if (!(err instanceof KubeApiError && (err.statusCode === 404 || err.statusCode === 409))) throw err;
      }
    },
  };
}

/** The Gateway API objects whose status this writes; the route kinds' lists by their keys. */
export interface GatewayObjects extends RouteLists {
  gatewayClasses?: GatewayClass[];
  gateways?: Gateway[];
  listenerSets?: ListenerSet[];
}

const key = (m: { namespace: string; name: string }): string => `${m.namespace}/${m.name}`;

/** A Gateway's status.addresses: each of its VIPs (one per family) the device has an address for. */
function addressesOf(
  st: { vip: string | undefined; moreVips?: string[] },
  address: (vip: string) => string | undefined,
): { type: string; value: string }[] {
  if (!st.vip) return [];
  return [st.vip, ...(st.moreVips ?? [])]
    .map((v) => address(v))
    .filter((v): v is string => v !== undefined)
    .map((value) => ({ type: 'IPAddress', value }));
}

export class GatewayStatusWriter {
  constructor(
    private readonly sink: StatusSink,
    private readonly cluster: string,
    private readonly controllerName: string,
    private readonly now: () => string = () => new Date().toISOString().replace(/\.\d+Z$/, 'Z'),
  ) {}

  /** Writes what differs; `failed(vs)` says whether the load balancer refused a virtual service. */
  async write(
    view: GatewayObjects,
    result: GatewayResult | undefined,
    failed: (vs: string) => boolean,
    /** The address a VIP stands for (an `auto:` VIP: what the device allocated, undefined until then). */
    address: (vip: string) => string | undefined = (vip) => vip,
  ): Promise<number> {
    if (!result) return 0;
    const at = this.now();
    const writes = [
      ...this.classWrites(view, result, at),
      ...this.gatewayWrites(view, result, failed, address, at),
      ...this.listenerSetWrites(view, result, failed, at),
      ...this.routeWrites(view, result, at),
    ];
    await Promise.all(writes);
    return writes.length;
  }

  /** The GatewayClasses' conditions and supported features, where they differ. */
  private classWrites(view: GatewayObjects, result: GatewayResult, at: string): Promise<void>[] {
    const writes: Promise<void>[] = [];
    for (const c of view.gatewayClasses ?? []) {
      const st = result.classes.get(c.metadata.name);
      if (!st) continue;
      const want = {
        conditions: conditions(st.conditions, c.metadata.generation, c.status.conditions, at),
        supportedFeatures: st.supportedFeatures.map((name) => ({ name })),
      };
      const shown = { conditions: c.status.conditions, supportedFeatures: c.status.supportedFeatures ?? [] };
      if (!same(want, shown)) {
        writes.push(this.sink.patch(RESOURCES.gatewayClasses, '', c.metadata.name, { status: want }));
      }
    }
    return writes;
  }

  /** Each Gateway's addresses, conditions and listeners, Programmed only where the device took it. */
  private gatewayWrites(
    view: GatewayObjects,
    result: GatewayResult,
    failed: (vs: string) => boolean,
    address: (vip: string) => string | undefined,
    at: string,
  ): Promise<void>[] {
    const writes: Promise<void>[] = [];
    for (const g of view.gateways ?? []) {
      const st = result.gateways.get(key(g.metadata));
      if (!st) continue;
      const current = g.status as {
        conditions?: Condition[];
        listeners?: { name: string; conditions?: Condition[] }[];
      };
      const listeners = this.listenerEntries(
        st.listeners,
        g,
        g.metadata,
        current.listeners ?? [],
        failed,
        at,
      );
      const anyProgrammed = listeners.some((l) =>
        l.conditions.some((c) => c.type === 'Programmed' && c.status === 'True'),
      );
      const gwSpecs = st.conditions.map((c) =>
        c.type === 'Programmed' && c.status && !anyProgrammed
          ? cond('Programmed', false, 'Pending', 'the load balancer has not taken its virtual services yet')
          : c,
      );
      // The count of attached ListenerSets where the Gateway takes them or once showed one (a merge
      // patch keeps a field it omits, so a count back to 0 is written).
      const shownSets = (g.status as { attachedListenerSets?: number }).attachedListenerSets;
      const counted = g.spec.allowedListeners !== undefined || shownSets !== undefined;
      const want = {
        addresses: addressesOf(st, address),
        conditions: conditions(gwSpecs, g.metadata.generation, current.conditions ?? [], at),
        listeners,
        ...(counted ? { attachedListenerSets: st.attachedListenerSets } : {}),
      };
      const shown = {
        addresses: g.status.addresses,
        conditions: current.conditions ?? [],
        listeners: current.listeners ?? [],
        ...(counted ? { attachedListenerSets: shownSets } : {}),
      };
      if (!same(want, shown)) {
        writes.push(
          this.sink.patch(RESOURCES.gateways, g.metadata.namespace, g.metadata.name, { status: want }),
        );
      }
    }
    return writes;
  }

  /**
   * Listener entries as written: a listener whose virtual service (on the VIP of `gateway`) the
   * device has not taken is not Programmed; a transition time kept while a condition stays.
   */
  private listenerEntries(
    statuses: readonly ListenerStatus[],
    owner: {
      spec: { listeners: { name: string; protocol: string; port: number }[] };
      metadata: { generation: number };
    },
    gateway: { namespace: string; name: string },
    shown: readonly { name: string; conditions?: Condition[] }[],
    failed: (vs: string) => boolean,
    at: string,
  ) {
    return statuses.map((l) => {
      const spec = owner.spec.listeners.find((x) => x.name === l.name);
      const vs = spec && gatewayVsName(this.cluster, gateway, spec.protocol, spec.port);
      // Its virtual service in either family (an IPv6 one is the twin).
      const refused = vs !== undefined && (failed(vs) || failed(familyName(vs, 'IPv6')));
      const specs: ConditionSpec[] = l.conditions.map((c) =>
        c.type === 'Programmed' && c.status && refused
          ? cond('Programmed', false, 'Pending', 'the load balancer has not taken its virtual service yet')
          : c,
      );
      const before = shown.find((x) => x.name === l.name)?.conditions ?? [];
      return {
        name: l.name,
        supportedKinds: l.supportedKinds.map((k) => ({ group: k.group, kind: k.kind })),
        attachedRoutes: l.attachedRoutes,
        conditions: conditions(specs, owner.metadata.generation, before, at),
      };
    });
  }

  /** Each ListenerSet naming one of our Gateways: its conditions and listeners, where they differ. */
  private listenerSetWrites(
    view: GatewayObjects,
    result: GatewayResult,
    failed: (vs: string) => boolean,
    at: string,
  ): Promise<void>[] {
    const writes: Promise<void>[] = [];
    for (const s of view.listenerSets ?? []) {
      const st = result.listenerSets?.get(key(s.metadata));
      if (!st) continue;
      const listeners = this.listenerEntries(st.listeners, s, st.gateway, s.status.listeners, failed, at);
      const anyProgrammed = listeners.some((l) =>
        l.conditions.some((c) => c.type === 'Programmed' && c.status === 'True'),
      );
      const specs = st.conditions.map((c) =>
        c.type === 'Programmed' && c.status && !anyProgrammed
          ? cond('Programmed', false, 'Pending', 'the load balancer has not taken its virtual services yet')
          : c,
      );
      const want = {
        conditions: conditions(specs, s.metadata.generation, s.status.conditions, at),
        listeners,
      };
      if (same(want, { conditions: s.status.conditions, listeners: s.status.listeners })) continue;
      writes.push(
        this.sink.patch(RESOURCES.listenerSets, s.metadata.namespace, s.metadata.name, { status: want }),
      );
    }
    return writes;
  }

  /** Each route's parents, where they differ (guarded by the route's resourceVersion). */
  private routeWrites(view: GatewayObjects, result: GatewayResult, at: string): Promise<void>[] {
    const writes: Promise<void>[] = [];
    // Every route kind alike (GATEWAY_ROUTES): its parents' statuses, on its own resource.
    const routes = ROUTE_KEYS.map((k): [string, ResourceRef, RouteObject[] | undefined] => [
      GATEWAY_ROUTES[k].kind,
      RESOURCES[k],
      view[k],
    ]);
    for (const [kind, ref, list] of routes)
      for (const r of list ?? []) {
        const st = result.routes.get(`${kind} ${key(r.metadata)}`);
        const before = r.status.parents;
        const want = statusEntries('parentRef', before, st?.parents ?? [], {
          controllerName: this.controllerName,
          generation: r.metadata.generation,
          at,
        });
        if (same(want, before)) continue;
        writes.push(
          this.sink.patch(ref, r.metadata.namespace, r.metadata.name, {
            metadata: { resourceVersion: r.metadata.resourceVersion },
            status: { parents: want },
          }),
        );
      }
    return writes;
  }
}
