/**
 * The ListenerSet route tests (GEP-1713), transcribed from upstream v1.6.1 (conformance/tests/
 * listenerset-*.go): routes attached through a set reach its listeners only, a Gateway parentRef
 * the Gateway's own, `allowedRoutes: Same` is the set's namespace, and a route's status is scoped
 * to the parentRefs it names; with traffic.
 */
import {
  attachedListenerSets,
  gatewayWithSets,
  listenerSetListeners,
  routesAcceptedBySet,
} from '../harness/listener-sets.ts';
import type { Expected } from '../harness/http.ts';
import { ConformanceFailure, type Ref } from '../harness/status.ts';
import { type ConformanceTest, expectAll, INFRA } from '../harness/suite.ts';

const ref = (name: string, namespace = INFRA): Ref => ({ namespace, name });
const ROUTES = ['Gateway', 'ListenerSet', 'HTTPRoute'];

/** A request for `host` and `path`: served by `backend` of the infra namespace, or 404. */
const req = (host: string, path: string, backend?: string): Expected =>
  backend
    ? { request: { host, path }, backend, namespace: INFRA }
    : { request: { host, path }, response: { statusCode: 404 } };

/** ListenerSetHTTPRouting's requests: each path served on the hosts of its routes' listeners only. */
function routingCases(): Expected[] {
  const G1 = 'gateway-listener-1.com';
  const G2 = 'gateway-listener-2.com';
  const set = (i: number, l: number) => `listener-set-http-routing-${i}-listener-${l}.com`;
  const hosts = [G1, G2, set(1, 1), set(1, 2), set(2, 1), set(2, 2)];
  const served: [string, string[], string][] = [
    ['/route', hosts, 'infra-backend-v1'],
    ['/gateway-route', [G1, G2], 'infra-backend-v2'],
    ['/gateway-section-route', [G1], 'infra-backend-v3'],
    ['/listener-set-http-routing-1-route', [set(1, 1), set(1, 2)], 'infra-backend-v2'],
    ['/listener-set-http-routing-1-section-route', [set(1, 1)], 'infra-backend-v3'],
    ['/listener-set-http-routing-2-route', [set(2, 1), set(2, 2)], 'infra-backend-v2'],
  ];
  return served.flatMap(([path, on, backend]) =>
    hosts.map((h) => req(h, path, on.includes(h) ? backend : undefined)),
  );
}

export const listenerSetRouteTests: ConformanceTest[] = [
  {
    shortName: 'ListenerSetHTTPRouting',
    description:
      'HTTPRoutes attach to a Gateway and its ListenerSets, each served on its own parent’s listeners',
    features: ROUTES,
    manifests: ['listenerset-http-routing.yaml'],
    traffic: true,
    run: async (s) => {
      const gw = { ...ref('gateway-with-listener-sets-http-routing'), listeners: ['gateway-listener-1'] };
      const addr = await s.status.gatewayAndRoutesAccepted(gw, 'HTTPRoute', [
        ref('attaches-to-all-listeners'),
        ref('gateway-route'),
        ref('gateway-section-route'),
      ]);
      await attachedListenerSets(s, gw, 2);
      const one = ref('listener-set-http-routing-1');
      await routesAcceptedBySet(s, one, [
        ref('attaches-to-all-listeners'),
        ref('listener-set-http-routing-1-route'),
        ref('listener-set-http-routing-1-section-route'),
      ]);
      await listenerSetListeners(s, one, [
        { name: 'listener-set-http-routing-1-listener-1', attachedRoutes: 3 },
        { name: 'listener-set-http-routing-1-listener-2', attachedRoutes: 2 },
      ]);
      const two = ref('listener-set-http-routing-2');
      await routesAcceptedBySet(s, two, [
        ref('attaches-to-all-listeners'),
        ref('listener-set-http-routing-2-route'),
      ]);
      await listenerSetListeners(s, two, [
        { name: 'listener-set-http-routing-2-listener-1', attachedRoutes: 2 },
        { name: 'listener-set-http-routing-2-listener-2', attachedRoutes: 2 },
      ]);
      await expectAll(s, addr, routingCases());
    },
  },
  {
    shortName: 'ListenerSetAllowedRoutesNamespaces',
    description:
      'A ListenerSet listener’s allowedRoutes namespaces are judged from the ListenerSet’s namespace',
    features: [...ROUTES, 'ReferenceGrant'],
    manifests: ['listenerset-allowed-routes-namespaces.yaml'],
    traffic: true,
    run: async (s) => {
      const gw = ref('gateway-with-listener-sets-test-allowed-routes');
      const addr = await s.status.gatewayAddress(gw, 'gateway-listener');
      await attachedListenerSets(s, gw, 2);
      // Same-namespace ListenerSet.
      const ls = ref('listenerset-test-allowed-routes-namespaces');
      await routesAcceptedBySet(s, ls, [
        ref('route-in-same-namespace'),
        ref('route-in-selected-namespace', 'gateway-api-routes-allowed-ns'),
        ref('route-not-in-selected-namespace', 'gateway-api-routes-not-allowed-ns'),
      ]);
      await listenerSetListeners(s, ls, [
        { name: 'listener-set-listener-allowed-routes-all', attachedRoutes: 3 },
        { name: 'listener-set-listener-allowed-routes-same', attachedRoutes: 1 },
        { name: 'listener-set-listener-allowed-routes-selector', attachedRoutes: 1 },
      ]);
      const host = (l: string) => `listener-set-listener-allowed-routes-${l}.com`;
      await expectAll(s, addr, [
        req(host('all'), '/route-in-same-namespace', 'infra-backend-v1'),
        req(host('all'), '/route-in-selected-namespace', 'infra-backend-v2'),
        req(host('all'), '/route-not-in-selected-namespace', 'infra-backend-v3'),
        req(host('same'), '/route-in-same-namespace', 'infra-backend-v1'),
        req(host('same'), '/route-in-selected-namespace'),
        req(host('same'), '/route-not-in-selected-namespace'),
        req(host('selector'), '/route-in-same-namespace'),
        req(host('selector'), '/route-in-selected-namespace', 'infra-backend-v2'),
        req(host('selector'), '/route-not-in-selected-namespace'),
      ]);
      // Cross-namespace ListenerSet: Same is its own namespace, not the Gateway's.
      const cross = ref('listenerset-test-allowed-routes-cross-ns', 'gateway-api-ls-cross-ns');
      await routesAcceptedBySet(s, cross, [ref('route-in-listenerset-namespace', 'gateway-api-ls-cross-ns')]);
      await s.status.routeCondition('HTTPRoute', ref('route-in-gateway-namespace'), cross, {
        type: 'Accepted',
        status: 'False',
        reason: 'NotAllowedByListeners',
      });
      await listenerSetListeners(s, cross, [
        { name: 'listener-set-listener-allowed-routes-cross-ns-same', attachedRoutes: 1 },
      ]);
      await expectAll(s, addr, [
        req(host('cross-ns-same'), '/route-in-listenerset-namespace', 'infra-backend-v1'),
        req(host('cross-ns-same'), '/route-in-gateway-namespace'),
      ]);
    },
  },
  {
    shortName: 'ListenerSetRouteStatusScopedToParentRef',
    description: 'A route’s status lists only the parentRefs it names: a Gateway, or a ListenerSet',
    features: ROUTES,
    manifests: ['listenerset-route-status-scoped-to-parentref.yaml'],
    traffic: false,
    run: async (s) => {
      const gw = ref('gateway-parentref');
      await gatewayWithSets(s, gw, 1);
      const ls = ref('listenerset-parentref');
      await listenerSetListeners(s, ls, [{ name: 'listenerset-parentref-listener', attachedRoutes: 1 }]);
      const accepted = [{ type: 'Accepted', status: 'True' }];
      await s.status.routeCondition('HTTPRoute', ref('route-parentref-gwonly'), gw, accepted[0]!);
      await s.status.routeParents(
        'HTTPRoute',
        ref('route-parentref-gwonly'),
        [{ parent: gw, conditions: accepted }],
        true,
      );
      await routesAcceptedBySet(s, ls, [ref('route-parentref-lsonly')]);
      await s.status.routeParents(
        'HTTPRoute',
        ref('route-parentref-lsonly'),
        [{ parent: { ...ls, kind: 'ListenerSet' }, conditions: accepted }],
        true,
      );
      // Exactly the parentRef each names (stricter than upstream's subset match: ours to hold).
      for (const [route, kind] of [
        ['route-parentref-gwonly', 'Gateway'],
        ['route-parentref-lsonly', 'ListenerSet'],
      ] as const) {
        const o = (await s.rig.api.get(
          `/apis/gateway.networking.k8s.io/v1/namespaces/${INFRA}/httproutes/${route}`,
        )) as {
          status?: { parents?: { parentRef: { kind?: string } }[] };
        };
        const parents = o.status?.parents ?? [];
        if (parents.length !== 1 || parents[0]!.parentRef.kind !== kind)
          throw new ConformanceFailure(
            `${route}: parents ${JSON.stringify(parents.map((p) => p.parentRef))}, want one ${kind}`,
          );
      }
    },
  },
  {
    shortName: 'ListenerSetDualParentRefIndependence',
    description: 'A route’s parentRefs to a Gateway and to its ListenerSet are accepted or not independently',
    features: ROUTES,
    manifests: ['listenerset-dual-parentref-independence.yaml'],
    traffic: true,
    run: async (s) => {
      const gw = ref('gateway-dual-parentref');
      const addr = await s.status.gatewayAddress(gw, 'gw-dual-parentref-listener');
      await gatewayWithSets(s, gw, 1);
      const ls = ref('ls-dual-parentref');
      await listenerSetListeners(s, ls, [{ name: 'ls-dual-parentref-listener', attachedRoutes: 2 }]);
      const both = ref('route-dual-parentref-both');
      await s.status.routeCondition('HTTPRoute', both, gw, { type: 'Accepted', status: 'True' });
      await s.status.routeCondition('HTTPRoute', both, ls, { type: 'Accepted', status: 'True' });
      await expectAll(s, addr, [
        req('gw-dual.com', '/dualboth', 'infra-backend-v1'),
        req('ls-dual.com', '/dualboth', 'infra-backend-v1'),
      ]);
      const one = ref('route-dual-parentref-one');
      await s.status.routeCondition('HTTPRoute', one, gw, {
        type: 'Accepted',
        status: 'False',
        reason: 'NoMatchingParent',
      });
      await s.status.routeCondition('HTTPRoute', one, ls, { type: 'Accepted', status: 'True' });
      await routesAcceptedBySet(s, ls, [one]);
      await expectAll(s, addr, [
        req('ls-dual.com', '/dualone', 'infra-backend-v2'),
        req('gw-dual.com', '/dualone'),
      ]);
    },
  },
  {
    shortName: 'ListenerSetGatewayParentSectionNameNotFound',
    description:
      'A route naming a ListenerSet listener as the sectionName of a Gateway parentRef is not accepted by the Gateway',
    features: ROUTES,
    manifests: ['listenerset-gateway-parent-section-name-not-found.yaml'],
    traffic: true,
    run: async (s) => {
      const gw = ref('gateway-section-name');
      const addr = await s.status.gatewayAddress(gw, 'gw-listener');
      await gatewayWithSets(s, gw, 1);
      await routesAcceptedBySet(s, ref('listenerset-section-name'), [ref('route-via-listenerset')]);
      await s.status.routeCondition('HTTPRoute', ref('route-via-gateway'), gw, {
        type: 'Accepted',
        status: 'False',
        reason: 'NoMatchingParent',
      });
      await expectAll(s, addr, [
        req('ls-section-name.com', '/goodsection', 'infra-backend-v1'),
        req('gw-section.com', '/badsection'),
      ]);
    },
  },
];
