/**
 * The ListenerSet status tests (GEP-1713), transcribed from upstream v1.6.1 (conformance/tests/
 * listenerset-*.go): which namespaces a Gateway lets attach, conflicts with the Gateway's and other
 * sets' listeners by precedence, ReferenceGrants of the set's own, route kinds. The route tests
 * are in listener-set-routes.ts.
 */
import {
  ACCEPTED_LISTENER,
  attachedListenerSets,
  gatewayWithSets,
  listenerSetIs,
  listenerSetListenersHave,
} from '../harness/listener-sets.ts';
import { type Cond, type Ref } from '../harness/status.ts';
import { type ConformanceTest, INFRA, type Suite } from '../harness/suite.ts';

const ref = (name: string, namespace = INFRA): Ref => ({ namespace, name });
const STATUS = ['Gateway', 'ListenerSet'];
const conflicted = (reason: string): Cond[] => [
  { type: 'Accepted', status: 'False', reason },
  { type: 'Programmed', status: 'False', reason },
  { type: 'Conflicted', status: 'True', reason },
];

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

export const listenerSetTests: ConformanceTest[] = [
  {
    shortName: 'ListenerSetDefaultNotAllowed',
    description:
      'Listener Sets are not allowed on the Gateway by default (i.e. when `allowedListeners` is not set)',
    features: STATUS,
    manifests: ['listenerset-default-not-allowed.yaml'],
    traffic: false,
    run: async (s) => {
      await gatewayWithSets(s, ref('gateway-default-does-not-allow-listenerset'), 0);
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
      await gatewayWithSets(s, ref('gateway-allows-listenerset-in-same-namespace'), 1);
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
      await gatewayWithSets(s, ref('gateway-allows-listenerset-in-selected-namespace'), 1);
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
      await gatewayWithSets(s, ref('gateway-with-listener-sets-test-reference-grant'), 1);
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
];
