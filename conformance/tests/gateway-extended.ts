/**
 * Extended Gateway tests, transcribed from upstream v1.6.1: listener isolation (a request is
 * served only by the routes of the most specific listener its host matches) and listeners on
 * port 8080. Run where the GatewayClass claims them.
 */
import type { Expected } from '../harness/http.ts';
import { ConformanceFailure } from '../harness/status.ts';
import {
  type ConformanceTest,
  expectAll,
  INFRA,
  readyListener,
  routesReady,
  type Suite,
} from '../harness/suite.ts';

const ref = (name: string) => ({ namespace: INFRA, name });
const PATHS = [
  '/empty-hostname',
  '/wildcard-example-com',
  '/wildcard-foo-example-com',
  '/abc-foo-example-com',
];
/** Each host is served by exactly one of the four routes: the one of its most specific listener. */
const isolation: Expected[] = (
  [
    ['bar.com', '/empty-hostname'],
    ['bar.example.com', '/wildcard-example-com'],
    ['bar.foo.example.com', '/wildcard-foo-example-com'],
    ['abc.foo.example.com', '/abc-foo-example-com'],
  ] as const
).flatMap(([host, served]) =>
  PATHS.map((path): Expected =>
    path === served
      ? { request: { host, path }, backend: 'infra-backend-v1', namespace: INFRA }
      : { request: { host, path }, response: { statusCode: 404 } },
  ),
);

export const gatewayExtendedTests: ConformanceTest[] = [
  {
    shortName: 'GatewayHTTPListenerIsolation',
    description: 'Listener isolation for HTTP listeners with multiple listeners and HTTPRoutes',
    features: ['Gateway', 'GatewayHTTPListenerIsolation', 'HTTPRoute'],
    manifests: [
      'gateway-http-listener-isolation.yaml',
      'gateway-http-listener-isolation-with-hostname-intersection.yaml',
    ],
    traffic: true,
    run: async (s) => {
      for (const [gw, suffix] of [
        ['http-listener-isolation', ''],
        ['http-listener-isolation-with-hostname-intersection', '-with-hostname-intersection'],
      ] as const) {
        const addr = await routesReady(
          s,
          ref(gw),
          ['empty-hostname', 'wildcard-example-com', 'wildcard-foo-example-com', 'abc-foo-example-com'].map(
            (r) => ref(`attaches-to-${r}${suffix}`),
          ),
        );
        await expectAll(s, addr, isolation);
      }
    },
  },
  {
    shortName: 'GatewayWithAttachedRoutesWithPort8080',
    description: 'A Gateway in the gateway-conformance-infra namespace should be attached to routes.',
    features: ['Gateway', 'GatewayPort8080', 'HTTPRoute'],
    manifests: ['gateway-with-attached-routes-with-port-8080.yaml'],
    traffic: false,
    run: (s) =>
      s.status.gatewayListeners(ref('gateway-with-two-listeners-and-one-attached-route'), [
        readyListener('http-unattached', 0),
        readyListener('http', 1),
      ]),
  },
  {
    shortName: 'GatewayStaticAddresses',
    description:
      'A Gateway in the gateway-conformance-infra namespace should be able to use previously determined addresses.',
    features: ['Gateway', 'GatewayStaticAddresses'],
    manifests: ['gateway-static-addresses.yaml'],
    traffic: false,
    run: async (s) => {
      const gw = ref('gateway-static-addresses');
      const path = `/apis/gateway.networking.k8s.io/v1/namespaces/${INFRA}/gateways/${gw.name}`;
      await s.status.gatewayLatest(gw);
      const addresses = async () =>
        ((await s.rig.api.get(path)) as { spec: { addresses: { type?: string; value: string }[] } }).spec
          .addresses;
      const given = await addresses();
      if (given.length !== 3)
        throw new ConformanceFailure(
          `expected 3 addresses on the Gateway (invalid, unusable, usable), got ${given.length}`,
        );
      const [invalid, unusable, usable] = given as [Address, Address, Address];
      await s.status.gatewayCondition(gw, {
        type: 'Accepted',
        status: 'False',
        reason: 'UnsupportedAddress',
      });
      await s.rig.api.patch(path, { spec: { addresses: [unusable, usable] } });
      await s.status.gatewayLatest(gw);
      await s.status.gatewayCondition(gw, { type: 'Accepted', status: 'True', reason: 'Accepted' });
      await s.status.gatewayCondition(gw, {
        type: 'Programmed',
        status: 'False',
        reason: 'AddressNotUsable',
      });
      await s.rig.api.patch(path, { spec: { addresses: [usable] } });
      await s.status.gatewayLatest(gw);
      await s.status.gatewayCondition(gw, { type: 'Accepted', status: 'True', reason: 'Accepted' });
      await s.status.gatewayCondition(gw, { type: 'Programmed', status: 'True', reason: 'Programmed' });
      await s.status.gatewayListeners(gw, [readyListener('http', 0)]);
      await onlyAddress(s, path, usable, [invalid.value, unusable.value]);
    },
  },
  {
    shortName: 'GatewayOptionalAddressValue',
    description: 'Check Gateway Support for GatewayAddressEmpty feature',
    features: ['Gateway', 'GatewayAddressEmpty'],
    manifests: ['gateway-optional-address-value.yaml'],
    traffic: false,
    run: async (s) => {
      const gw = ref('gateway-without-address-value');
      await s.status.gatewayLatest(gw);
      await s.status.gatewayAddress(gw, 'http');
    },
  },
];

type Address = { type?: string; value: string };

/** The Gateway's status lists exactly the usable address, of its type, and none of the others. */
async function onlyAddress(s: Suite, path: string, usable: Address, not: string[]): Promise<void> {
  const deadline = Date.now() + s.timeouts.statusMs;
  let got: Address[] = [];
  while (Date.now() < deadline) {
    got = ((await s.rig.api.get(path)) as { status?: { addresses?: Address[] } }).status?.addresses ?? [];
    if (got.length === 1) break;
    await new Promise((r) => setTimeout(r, s.timeouts.pollMs));
  }
  if (got.length !== 1)
    throw new ConformanceFailure(`expected only 1 status address on Gateway, got ${JSON.stringify(got)}`);
  const values = got.map((a) => a.value);
  for (const v of not)
    if (values.includes(v)) throw new ConformanceFailure(`status lists ${v}, which it should not`);
  if (!values.includes(usable.value))
    throw new ConformanceFailure(`status lacks the usable address ${usable.value}`);
  if (got[0]!.type !== usable.type)
    throw new ConformanceFailure(`status address type ${got[0]!.type}, want ${usable.type}`);
}
