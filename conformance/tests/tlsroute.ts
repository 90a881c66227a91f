/**
 * GATEWAY-TLS tests, transcribed from upstream v1.6.1 (conformance/tests/tlsroute-*.go): TLS
 * passthrough by SNI to the TCP echo and to the HTTPS echo, with real traffic; server names no
 * route takes closed in the handshake; the status of routes and listeners that cannot attach; and
 * the extended Terminate mode (the handshake ends at the gateway, the TCP echo's plain port
 * answers) and Mixed mode (both on one port; refused where Mixed is not claimed).
 */
import { expectEventually } from '../harness/http.ts';
import { ConformanceFailure } from '../harness/status.ts';
import { type ConformanceTest, INFRA, type Suite } from '../harness/suite.ts';
import { expectTcpEcho, expectTlsRejected } from '../harness/tls.ts';

const TLS_CORE = ['Gateway', 'TLSRoute'];
const ref = (name: string) => ({ namespace: INFRA, name });

/** The suite's CA (tls-checks-ca-certificate), which signs the TLS backends' certificates. */
async function suiteCa(s: Suite): Promise<string> {
  const cm = (await s.rig.api.get(`/api/v1/namespaces/${INFRA}/configmaps/tls-checks-ca-certificate`)) as
    { data?: Record<string, string> } | undefined;
  const ca = cm?.data?.['ca.crt'];
  if (!ca) throw new ConformanceFailure(`ca.crt not found in configmap: ${INFRA}/tls-checks-ca-certificate`);
  return ca;
}

/** GatewayAndTLSRoutesMustBeAccepted: the address, and the last route's hostnames. */
async function tlsReady(
  s: Suite,
  gw: string,
  routes: string[],
): Promise<{ addr: string; hostnames: string[] }> {
  const addr = await s.status.gatewayAddress(ref(gw));
  let hostnames: string[] = [];
  for (const r of routes) {
    await s.status.routeParents('TLSRoute', ref(r), [
      { parent: ref(gw), conditions: [{ type: 'Accepted', status: 'True', reason: 'Accepted' }] },
    ]);
    const o = (await s.rig.api.get(
      `/apis/gateway.networking.k8s.io/v1/namespaces/${INFRA}/tlsroutes/${r}`,
    )) as {
      spec?: { hostnames?: string[] };
    };
    hostnames = o.spec?.hostnames ?? [];
  }
  return { addr, hostnames };
}

const resolved = (s: Suite, route: string, gw: string) =>
  s.status.routeCondition('TLSRoute', ref(route), ref(gw), {
    type: 'ResolvedRefs',
    status: 'True',
    reason: 'ResolvedRefs',
  });

/** An HTTPS request by SNI through passthrough to the HTTPS echo. */
const httpsThrough = (s: Suite, addr: string, host: string, backend: string, ca: string) =>
  s.sendsTraffic
    ? expectEventually(addr, { request: { host, path: '/' }, backend, namespace: INFRA }, s.timeouts, 3, {
        ca,
        servername: host,
      })
    : Promise.resolve();

export const tlsRouteTests: ConformanceTest[] = [
  {
    shortName: 'TLSRouteSimpleSameNamespace',
    description:
      'A single TLSRoute in the gateway-conformance-infra namespace attaches to a Gateway in the same namespace',
    features: TLS_CORE,
    manifests: ['tlsroute-simple-same-namespace.yaml'],
    traffic: true,
    run: async (s) => {
      const { addr, hostnames } = await tlsReady(s, 'gateway-tlsroute', ['gateway-conformance-infra-test']);
      if (hostnames.length !== 1) throw new ConformanceFailure(`found ${hostnames.length} hostnames, want 1`);
      const ca = await suiteCa(s);
      if (!s.sendsTraffic) return;
      await expectTcpEcho(
        addr,
        hostnames[0]!,
        ca,
        { backendIsTLS: true, backend: 'tcp-backend', namespace: INFRA, hostname: hostnames[0]! },
        s.timeouts,
      );
    },
  },
  {
    shortName: 'TLSRouteHostnameIntersection',
    description:
      'TLSRoutes should attach to listeners only if they have intersecting hostnames, and should accept connections only for the intersecting hostnames',
    features: TLS_CORE,
    manifests: ['tlsroute-hostname-intersection.yaml'],
    traffic: true,
    run: async (s) => {
      const ca = await suiteCa(s);
      const x1 = await tlsReady(s, 'gw-tlsroute-exact-hostname-x-1', [
        'tlsroute-more-specific-wc-hostname-x-1',
      ]);
      await resolved(s, 'tlsroute-more-specific-wc-hostname-x-1', 'gw-tlsroute-exact-hostname-x-1');
      await httpsThrough(s, x1.addr, 'abc.example.com', 'tls-backend', ca);
      if (s.sendsTraffic) await expectTlsRejected(x1.addr, 'non.matching.com', s.timeouts);
      for (const [gw, routes, other] of [
        [
          'gw-tlsroute-more-specific-wc-hostname-x-2',
          ['tlsroute-exact-hostname-x-2', 'tlsroute-less-specific-wc-hostname-x-2'],
          'non.matching.com',
        ],
        [
          'gw-tlsroute-less-specific-wc-hostname-x-3',
          ['tlsroute-exact-hostname-x-3', 'tlsroute-more-specific-wc-hostname-x-3'],
          'non.matching.com',
        ],
        [
          'gw-tlsroute-empty-hostname-x-4',
          ['tlsroute-exact-hostname-x-4', 'tlsroute-less-specific-wc-hostname-x-4'],
          'non.matching.org',
        ],
      ] as const) {
        const { addr } = await tlsReady(s, gw, [...routes]);
        for (const r of routes) await resolved(s, r, gw);
        await httpsThrough(s, addr, 'abc.example.com', 'tls-backend', ca);
        await httpsThrough(s, addr, 'other.example.com', 'tls-backend-2', ca);
        if (s.sendsTraffic) await expectTlsRejected(addr, other, s.timeouts);
      }
    },
  },
  ...(
    [
      [
        'TLSRouteInvalidBackendRefNonexistent',
        'tlsroute-invalid-backendref-nonexistent.yaml',
        'gateway-tlsroute-invalid-backend-ref-nonexistent',
        'invalid-backend-ref-nonexistent',
        'BackendNotFound',
      ],
      [
        'TLSRouteInvalidBackendRefUnknownKind',
        'tlsroute-invalid-backendref-unknown-kind.yaml',
        'gateway-tlsroute-invalid-backend-ref-unknown-kind',
        'invalid-backend-ref-unknown-kind',
        'InvalidKind',
      ],
    ] as const
  ).map(([shortName, file, gw, route, reason]): ConformanceTest => ({
    shortName,
    description: `A TLSRoute whose only backendRef does not resolve (${reason}): connections are accepted, then reset or closed`,
    features: TLS_CORE,
    manifests: [file],
    traffic: true,
    run: async (s) => {
      const { addr, hostnames } = await tlsReady(s, gw, [route]);
      await s.status.routeCondition('TLSRoute', ref(route), ref(gw), {
        type: 'ResolvedRefs',
        status: 'False',
        reason,
      });
      if (s.sendsTraffic) await expectTlsRejected(addr, hostnames[0] ?? '', s.timeouts);
    },
  })),
  {
    shortName: 'TLSRouteInvalidNoMatchingListener',
    description:
      'TLSRoutes are not accepted on HTTP or HTTPS listeners, nor by a sectionName no listener has',
    features: TLS_CORE,
    manifests: ['tlsroute-invalid-no-matching-listener.yaml'],
    traffic: false,
    run: async (s) => {
      const notAllowed = { type: 'Accepted', status: 'False', reason: 'NotAllowedByListeners' };
      await s.status.routeCondition(
        'TLSRoute',
        ref('tlsroute-not-allowed-protocol-http'),
        ref('gateway-tlsroute-http-only'),
        notAllowed,
      );
      await s.status.routeCondition(
        'TLSRoute',
        ref('tlsroute-not-allowed-protocol-https'),
        ref('gateway-tlsroute-https-only'),
        notAllowed,
      );
      await s.status.routeCondition(
        'TLSRoute',
        ref('tlsroute-no-matching-section-name'),
        ref('gateway-tlsroute-tls-passthrough-only'),
        {
          type: 'Accepted',
          status: 'False',
          reason: 'NoMatchingParent',
        },
      );
      for (const r of [
        'tlsroute-not-allowed-protocol-http',
        'tlsroute-not-allowed-protocol-https',
        'tlsroute-no-matching-section-name',
      ])
        await s.status.routeNoAcceptedParents('TLSRoute', ref(r));
      for (const gw of [
        'gateway-tlsroute-http-only',
        'gateway-tlsroute-https-only',
        'gateway-tlsroute-tls-passthrough-only',
      ])
        await s.status.gatewayZeroRoutes(ref(gw));
    },
  },
  {
    shortName: 'TLSRouteInvalidNoMatchingListenerHostname',
    description: 'TLSRoutes whose hostnames meet no listener hostname are not accepted and not counted',
    features: TLS_CORE,
    manifests: ['tlsroute-invalid-no-matching-listener-hostname.yaml'],
    traffic: false,
    run: async (s) => {
      const cond = { type: 'Accepted', status: 'False', reason: 'NoMatchingListenerHostname' };
      await s.status.routeCondition(
        'TLSRoute',
        ref('tlsroute-hostname-mismatch-1'),
        ref('gateway-tls-exact-hostname'),
        cond,
      );
      await s.status.routeCondition(
        'TLSRoute',
        ref('tlsroute-hostname-mismatch-2'),
        ref('gateway-tls-wildcard-hostname'),
        cond,
      );
      await s.status.routeNoAcceptedParents('TLSRoute', ref('tlsroute-hostname-mismatch-1'));
      await s.status.routeNoAcceptedParents('TLSRoute', ref('tlsroute-hostname-mismatch-2'));
      await s.status.gatewayZeroRoutes(ref('gateway-tls-exact-hostname'));
      await s.status.gatewayZeroRoutes(ref('gateway-tls-wildcard-hostname'));
    },
  },
  {
    shortName: 'TLSRouteInvalidReferenceGrant',
    description:
      'A TLSRoute with a backendRef in another namespace and no ReferenceGrant has ResolvedRefs False, RefNotPermitted',
    features: ['Gateway', 'TLSRoute', 'ReferenceGrant'],
    manifests: ['tlsroute-invalid-reference-grant.yaml'],
    traffic: false,
    run: async (s) => {
      await tlsReady(s, 'gateway-tlsroute-referencegrant', ['gateway-conformance-infra-test']);
      await s.status.routeCondition(
        'TLSRoute',
        ref('gateway-conformance-infra-test'),
        ref('gateway-tlsroute-referencegrant'),
        {
          type: 'ResolvedRefs',
          status: 'False',
          reason: 'RefNotPermitted',
        },
      );
    },
  },
  {
    shortName: 'TLSRouteListenerPassthroughSupportedKinds',
    description:
      'A TLS passthrough listener that allows TCPRoute and TLSRoute lists only TLSRoute and says InvalidRouteKinds',
    features: TLS_CORE,
    manifests: ['tlsroute-listener-passthrough-supported-kinds.yaml'],
    traffic: false,
    run: (s) =>
      s.status.gatewayListeners(ref('gateway-tlsroute-passthrough-supported-kind'), [
        {
          name: 'tls-passthrough',
          supportedKinds: [{ kind: 'TLSRoute' }],
          attachedRoutes: 0,
          conditions: [{ type: 'ResolvedRefs', status: 'False', reason: 'InvalidRouteKinds' }],
        },
      ]),
  },
  {
    shortName: 'TLSRouteListenerTerminateNotSupported',
    description:
      'A TLS listener in Terminate mode, where it is not supported, is not accepted: UnsupportedValue',
    features: TLS_CORE,
    manifests: ['tlsroute-listener-terminate-not-supported.yaml'],
    traffic: false,
    run: (s) =>
      s.rig.features.includes('TLSRouteModeTerminate')
        ? Promise.resolve()
        : s.status.gatewayListeners(ref('gateway-tlsroute-terminate-unsupported'), [
            {
              name: 'tls-terminate',
              supportedKinds: [],
              attachedRoutes: 0,
              conditions: [{ type: 'Accepted', status: 'False', reason: 'UnsupportedValue' }],
            },
          ]),
  },
  {
    shortName: 'TLSRouteTerminateSimpleSameNamespace',
    description:
      'A single TLSRoute in the gateway-conformance-infra namespace attaches to a Gateway using Terminate mode in the same namespace',
    features: [...TLS_CORE, 'TLSRouteModeTerminate'],
    manifests: ['tlsroute-terminate-simple-same-namespace.yaml'],
    traffic: true,
    run: async (s) => {
      const { addr, hostnames } = await tlsReady(s, 'gateway-tlsroute-terminate', [
        'tlsroute-terminated-test',
      ]);
      if (hostnames.length !== 1) throw new ConformanceFailure(`found ${hostnames.length} hostnames, want 1`);
      const ca = await suiteCa(s);
      if (!s.sendsTraffic) return;
      // Terminated at the gateway: the TCP echo's plain port answers, and it saw no TLS.
      await expectTcpEcho(
        addr,
        hostnames[0]!,
        ca,
        { backendIsTLS: false, backend: 'tcp-backend', namespace: INFRA, hostname: '' },
        s.timeouts,
      );
    },
  },
  {
    shortName: 'TLSRouteMixedTerminationSameNamespace',
    description:
      'A Gateway with 2 TLS Listeners on different modes, on the same port must route the traffic correctly',
    features: [...TLS_CORE, 'TLSRouteModeTerminate', 'TLSRouteModeMixed'],
    manifests: ['tlsroute-mixed-termination-same-namespace.yaml'],
    traffic: true,
    run: async (s) => {
      const gw = 'gateway-tlsroute-mixed-termination';
      const through = await tlsReady(s, gw, ['gateway-conformance-mixed-passthroughroute']);
      const listener = (name: string) => ({
        name,
        supportedKinds: [{ kind: 'TLSRoute' }],
        attachedRoutes: 1,
        conditions: [{ type: 'Accepted', status: 'True', reason: 'Accepted' }],
      });
      await s.status.gatewayListeners(ref(gw), [listener('tls-terminate'), listener('tls-passthrough')]);
      if (through.hostnames.length !== 1)
        throw new ConformanceFailure(`found ${through.hostnames.length} passthrough hostnames, want 1`);
      const ended = await tlsReady(s, gw, ['gateway-conformance-mixed-terminateroute']);
      if (ended.hostnames.length !== 1)
        throw new ConformanceFailure(`found ${ended.hostnames.length} terminate hostnames, want 1`);
      const ca = await suiteCa(s);
      if (!s.sendsTraffic) return;
      await Promise.all([
        // Terminated at the gateway: the TCP echo's plain port answers, and it saw no TLS.
        expectTcpEcho(
          through.addr,
          ended.hostnames[0]!,
          ca,
          { backendIsTLS: false, backend: 'tcp-backend', namespace: INFRA, hostname: '' },
          s.timeouts,
        ),
        // Passed through on the same port: the TCP echo's TLS port saw the name asked.
        expectTcpEcho(
          through.addr,
          through.hostnames[0]!,
          ca,
          { backendIsTLS: true, backend: 'tcp-backend', namespace: INFRA, hostname: through.hostnames[0]! },
          s.timeouts,
        ),
      ]);
    },
  },
  {
    shortName: 'TLSRouteListenerTerminateSupportedKinds',
    description:
      'A Gateway Listener with TLS mode Terminate MUST include TLSRoute in SupportedKinds when termination is supported',
    features: [...TLS_CORE, 'TLSRouteModeTerminate'],
    manifests: ['tlsroute-listener-terminate-supported-kinds.yaml'],
    traffic: false,
    run: (s) =>
      s.status.gatewayListeners(ref('gateway-tlsroute-terminate-supported'), [
        {
          name: 'tls-terminate',
          supportedKinds: [{ kind: 'TLSRoute' }],
          attachedRoutes: 0,
          conditions: [{ type: 'Accepted', status: 'True', reason: 'Accepted' }],
        },
      ]),
  },
  {
    shortName: 'TLSRouteListenerMixedTerminationNotSupported',
    description:
      'When TLSRoute mixed termination/passthrough listener is NOT supported, a Gateway Listener with 2 distinct TLS modes on the same port MUST have Accepted=False with Reason=ProtocolConflict',
    features: [...TLS_CORE, 'TLSRouteModeTerminate'],
    manifests: ['tlsroute-listener-mixed-termination-not-supported.yaml'],
    traffic: false,
    run: (s) =>
      s.rig.features.includes('TLSRouteModeMixed')
        ? Promise.resolve()
        : s.status.gatewayListeners(ref('gateway-tlsroute-mixed-termination-not-supported'), [
            {
              name: 'tls-terminate',
              supportedKinds: [],
              attachedRoutes: 0,
              conditions: [{ type: 'Accepted', status: 'False', reason: 'ProtocolConflict' }],
            },
            {
              name: 'tls-passthrough',
              supportedKinds: [],
              attachedRoutes: 0,
              conditions: [{ type: 'Accepted', status: 'False', reason: 'ProtocolConflict' }],
            },
          ]),
  },
  {
    shortName: 'BackendTLSPolicyTLSRouteTerminate',
    description:
      'A BackendTLSPolicy attached to a Service consumed by a TLSRoute using Terminate mode should re-encrypt traffic to the backend',
    features: [...TLS_CORE, 'TLSRouteModeTerminate', 'BackendTLSPolicy'],
    manifests: ['backendtlspolicy-tlsroute-terminate.yaml'],
    traffic: true,
    run: async (s) => {
      const gw = ref('gateway-btls-tlsroute-terminate');
      const { addr, hostnames } = await tlsReady(s, gw.name, ['backendtlspolicy-tlsroute-terminate']);
      if (hostnames.length !== 1) throw new ConformanceFailure(`found ${hostnames.length} hostnames, want 1`);
      for (const c of [
        { type: 'Accepted', status: 'True', reason: 'Accepted' },
        { type: 'ResolvedRefs', status: 'True', reason: 'ResolvedRefs' },
      ])
        await s.status.backendTlsPolicyCondition(ref('btls-tlsroute-terminate-test'), gw, c);
      const ca = await suiteCa(s);
      if (!s.sendsTraffic) return;
      // Terminated at the gateway, then TLS again to the backend, which saw the policy's hostname.
      await expectTcpEcho(
        addr,
        hostnames[0]!,
        ca,
        { backendIsTLS: true, backend: 'tcp-backend', namespace: INFRA, hostname: 'abc.example.com' },
        s.timeouts,
      );
    },
  },
];
