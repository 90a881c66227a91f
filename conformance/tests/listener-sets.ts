/**
 * The ListenerSet tests (GEP-1713), transcribed from upstream v1.6.1 (conformance/tests/
 * listenerset-*.go): which namespaces a Gateway lets attach, conflicts with the Gateway's and
 * other sets' listeners by precedence, ReferenceGrants of the set's own, route kinds, and routes
 * attached through a set (its listeners only, their status scoped to that parentRef), with traffic.
 */
import {
  ACCEPTED_LISTENER,
  attachedListenerSets,
  listenerSetIs,
  listenerSetListeners,
  listenerSetListenersHave,
  routesAcceptedBySet,
} from '../harness/listener-sets.ts';
import type { Expected } from '../harness/http.ts';
import { type Cond, ConformanceFailure, type Ref } from '../harness/status.ts';
import { type ConformanceTest, expectAll, INFRA, type Suite } from '../harness/suite.ts';

const ref = (name: string, namespace = INFRA): Ref => ({ namespace, name });
const STATUS = ['Gateway', 'ListenerSet'];
const ROUTES = ['Gateway', 'ListenerSet', 'HTTPRoute'];
const conflicted = (reason: string): Cond[] => [
  { type: 'Accepted', status: 'False', reason },
  { type: 'Programmed', status: 'False', reason },
  { type: 'Conflicted', status: 'True', reason },
];

/** The Gateway Accepted, so many sets attached. */
async function gatewayWith(s: Suite, gw: Ref, sets: number): Promise<void> {
  await s.status.gatewayCondition(gw, { type: 'Accepted', status: 'True' });
  await attachedListenerSets(s, gw, sets);
}

/** A request for `host` and `path`: served by `backend` of the infra namespace, or `status`. */
const req = (host: string, path: string, backend?: string): Expected =>
  backend
    ? { request: { host, path }, backend, namespace: INFRA }
    : { request: { host, path }, response: { statusCode: 404 } };

/** A set not allowed by its Gateway: Accepted and Programmed False, NotAllowed. */
const notAllowed = (s: Suite, ls: Ref) => listenerSetIs(s, ls, ['False', 'NotAllowed']);

/** Upstream's conflict tests: one valid listener each keeps two sets accepted, the others not. */
async function conflicts(s: Suite, kind: 'hostname' | 'protocol'): Promise<void> {
  const reason = kind === 'hostname' ? 'HostnameConflict' : 'ProtocolConflict';
  const gw = ref(`gateway-with-listenerset-${kind}-conflict`);
  await s.status.gatewayCondition(gw, { type: 'Accepted', status: 'True' });
  await s.status.listenersHave(gw, ACCEPTED_LISTENER, ['gateway-listener']);
  await s.status.listenersHave(gw, ACCEPTED_LISTENER, [`${kind}-conflict-with-gateway-listener`]);
  await attachedListenerSets(s, gw, 2);
  const set = (n: string) => ref(`listenerset-with-${kind}-conflict-with-${n}`);
  await listenerSetIs(s, set('gateway-1'), ['True'], ['True', 'Programmed']);
  await listenerSetListenersHave(s, set('gateway-1'), ACCEPTED_LISTENER, ['listener-set-1-listener']);
  await listenerSetListenersHave(s, set('gateway-1'), conflicted(reason), [
    `${kind}-conflict-with-gateway-listener`,
  ]);
  await listenerSetListenersHave(s, set('gateway-1'), ACCEPTED_LISTENER, [
    `${kind}-conflict-with-listener-set-listener`,
  ]);
  await listenerSetIs(s, set('gateway-2'), ['False', 'ListenersNotValid']);
  await listenerSetListenersHave(s, set('gateway-2'), conflicted(reason), [
    `${kind}-conflict-with-gateway-listener`,
  ]);
  await listenerSetIs(s, set('listener-set-1'), ['True'], ['True', 'Programmed']);
  await listenerSetListenersHave(s, set('listener-set-1'), ACCEPTED_LISTENER, ['listener-set-2-listener']);
  await listenerSetListenersHave(s, set('listener-set-1'), conflicted(reason), [
    `${kind}-conflict-with-listener-set-listener`,
  ]);
  await listenerSetIs(s, set('listener-set-2'), ['False', 'ListenersNotValid']);
  await listenerSetListenersHave(s, set('listener-set-2'), conflicted(reason), [
    `${kind}-conflict-with-listener-set-listener`,
  ]);
}

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

export const listenerSetTests: ConformanceTest[] = [
  {
    shortName: 'ListenerSetDefaultNotAllowed',
    description:
      'Listener Sets are not allowed on the Gateway by default (i.e. when `allowedListeners` is not set)',
    features: STATUS,
    manifests: ['listenerset-default-not-allowed.yaml'],
    traffic: false,
    run: async (s) => {
      await gatewayWith(s, ref('gateway-default-does-not-allow-listenerset'), 0);
      await notAllowed(s, ref('listenerset-default-not-allowed'));
    },
  },
  {
    shortName: 'ListenerSetAllowedNamespaceNone',
    description: 'Listener Sets are not allowed on the Gateway when `allowedListeners` is set to `None`',
    features: STATUS,
    manifests: ['listenerset-allowed-namespace-none.yaml'],
    traffic: false,
    run: async (s) => {
      await attachedListenerSets(s, ref('gateway-does-not-allow-listenerset'), 0);
      await notAllowed(s, ref('listenerset-not-allowed'));
    },
  },
  {
    shortName: 'ListenerSetAllowedNamespaceSame',
    description:
      'ListenerSets in the same namespace as the Gateway are allowed when `allowedListeners` is set to `Same`',
    features: STATUS,
    manifests: ['listenerset-allowed-namespace-same.yaml'],
    traffic: false,
    run: async (s) => {
      await gatewayWith(s, ref('gateway-allows-listenerset-in-same-namespace'), 1);
      const ls = ref('listenerset-in-same-namespace');
      await listenerSetIs(s, ls, ['True', 'Accepted'], ['True', 'Programmed']);
      await listenerSetListenersHave(s, ls, ACCEPTED_LISTENER, ['listenerset-in-same-namespace-listener']);
      await notAllowed(
        s,
        ref('listenerset-in-different-namespace', 'gateway-api-listenerset-not-allowed-ns'),
      );
    },
  },
  {
    shortName: 'ListenerSetAllowedNamespaceSelector',
    description:
      'ListenerSets in namespaces matching the selector are allowed when `allowedListeners` is set to `Selector`',
    features: STATUS,
    manifests: ['listenerset-allowed-namespace-selector.yaml'],
    traffic: false,
    run: async (s) => {
      await gatewayWith(s, ref('gateway-allows-listenerset-in-selected-namespace'), 1);
      const ls = ref('listenerset-in-selected-namespace', 'gateway-api-listenerset-selector-allowed-ns');
      await listenerSetIs(s, ls, ['True', 'Accepted'], ['True', 'Programmed']);
      await listenerSetListenersHave(s, ls, ACCEPTED_LISTENER, [
        'listenerset-in-selected-namespace-listener',
      ]);
      await notAllowed(
        s,
        ref('listenerset-not-in-selected-namespace', 'gateway-api-listenerset-selector-not-allowed-ns'),
      );
    },
  },
  {
    shortName: 'ListenerSetHostnameConflict',
    description:
      'Listeners with conflicting hostnames within a Gateway and its ListenerSets are rejected by listener precedence',
    features: STATUS,
    manifests: ['listenerset-hostname-conflict.yaml'],
    traffic: false,
    run: (s) => conflicts(s, 'hostname'),
  },
  {
    shortName: 'ListenerSetProtocolConflict',
    description:
      'Listeners with conflicting protocols within a Gateway and its ListenerSets are rejected by listener precedence',
    features: STATUS,
    manifests: ['listenerset-protocol-conflict.yaml'],
    traffic: false,
    run: (s) => conflicts(s, 'protocol'),
  },
  {
    shortName: 'ListenerSetReferenceGrant',
    description:
      'A ListenerSet listener references a Secret in another namespace through a ReferenceGrant from the ListenerSet kind',
    features: [...STATUS, 'ReferenceGrant'],
    manifests: ['listenerset-reference-grant.yaml'],
    traffic: false,
    run: async (s) => {
      await gatewayWith(s, ref('gateway-with-listener-sets-test-reference-grant'), 1);
      const granted = ref('listenerset-with-reference-grant');
      await listenerSetIs(s, granted, ['True'], ['True']);
      await listenerSetListenersHave(
        s,
        granted,
        [{ type: 'ResolvedRefs', status: 'True' }],
        ['listenerset-with-reference-grant-listener'],
      );
      const refused = ref(
        'listenerset-without-reference-grant',
        'gateway-api-listener-sets-test-reference-grant-ns',
      );
      await listenerSetIs(s, refused, ['False', 'ListenersNotValid']);
      await listenerSetListenersHave(
        s,
        refused,
        [{ type: 'ResolvedRefs', status: 'False', reason: 'RefNotPermitted' }],
        ['listenerset-without-reference-grant-listener'],
      );
    },
  },
  {
    shortName: 'ListenerSetAllowedRoutesSupportedKinds',
    description:
      'A ListenerSet listener asking route kinds its protocol cannot carry has ResolvedRefs False, InvalidRouteKinds',
    features: [...STATUS, 'TLSRoute'],
    manifests: ['listenerset-allowed-routes-supported-kinds.yaml'],
    traffic: false,
    run: async (s) => {
      await listenerSetListenersHave(
        s,
        ref('listenerset-test-allowed-routes-supported-kinds'),
        [{ type: 'ResolvedRefs', status: 'False', reason: 'InvalidRouteKinds' }],
        ['listener-set-listener-allowed-routes-tls-only'],
      );
    },
  },
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
      await gatewayWith(s, gw, 1);
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
      await gatewayWith(s, gw, 1);
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
      await gatewayWith(s, gw, 1);
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
