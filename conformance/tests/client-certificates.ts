/**
 * Client certificate validation at the Gateway (`spec.tls.frontend`), transcribed from upstream
 * v1.6.1 (conformance/tests/gateway-with-clientcertificate-validation*.go,
 * gateway-with-invalid-clientcertificate-validation.go,
 * gateway-invalid-default-frontend-client-certificate-validation.go): the default and per-port
 * CAs each admit their own clients and refuse the other's, AllowInsecureFallback admits every
 * client and says InsecureFrontendValidationMode on the Gateway, and CA references that do not
 * resolve take down only the listeners they concern, with the spec's reasons.
 */
import { ConformanceFailure, type Cond } from '../harness/status.ts';
import { type ClientCert, expectTlsFailure, mustAskCertificate } from '../harness/client-certs.ts';
import { expectEventually } from '../harness/http.ts';
import { type ConformanceTest, INFRA, routesReady, type Suite } from '../harness/suite.ts';

const FEATURE = 'GatewayFrontendClientCertificateValidation';
const ref = (name: string) => ({ namespace: INFRA, name });
const SECRETS = `/api/v1/namespaces/${INFRA}/secrets`;

/** GetTLSSecret: a Secret's certificate and key. */
async function secret(s: Suite, name: string): Promise<ClientCert> {
  const o = (await s.rig.api.get(`${SECRETS}/${name}`)) as { data?: Record<string, string> } | undefined;
  const dec = (k: string) => Buffer.from(o?.data?.[k] ?? '', 'base64').toString('utf8');
  const c = { cert: dec('tls.crt'), key: dec('tls.key') };
  if (!c.cert || !c.key)
    throw new ConformanceFailure(`missing required certificate and key in Secret ${name}`);
  return c;
}

const host = (addr: string) => addr.slice(0, addr.lastIndexOf(':')).replace(/^\[|\]$/g, '');
const at = (addr: string, port: number) => {
  const h = host(addr);
  return `${h.includes(':') ? `[${h}]` : h}:${port}`;
};

/** A request to `hostname` answered 200 by `backend`, with this client certificate (or none), and asked for it. */
async function served(
  s: Suite,
  addr: string,
  ca: string,
  hostname: string,
  backend: string,
  client: ClientCert | undefined,
): Promise<void> {
  if (!s.sendsTraffic) return;
  await expectEventually(
    addr,
    { request: { host: hostname, path: '/' }, response: { statusCode: 200 }, backend, namespace: INFRA },
    s.timeouts,
    3,
    { ca, servername: hostname, client },
  );
  if (client) await mustAskCertificate(addr, hostname);
}

async function refused(s: Suite, addr: string, ca: string, hostname: string, client: ClientCert | undefined) {
  if (!s.sendsTraffic) return;
  await expectTlsFailure(
    addr,
    { request: { host: hostname, path: '/' }, namespace: INFRA },
    {
      ca,
      servername: hostname,
      client,
    },
  );
}

/** The suite's certificates: the listeners' server certificate, a client of each CA. */
async function certificates(s: Suite) {
  const [server, client, perPort] = await Promise.all([
    secret(s, 'tls-validity-checks-certificate'),
    secret(s, 'tls-validity-checks-client-certificate'),
    secret(s, 'tls-validity-checks-per-port-client-certificate'),
  ]);
  return { ca: server.cert, client, perPort };
}

const listenerHas = (s: Suite, gw: string, listener: string, conds: Cond[]) =>
  s.status.listenersHave(ref(gw), conds, [listener]);

export const clientCertificateTests: ConformanceTest[] = [
  {
    shortName: 'GatewayFrontendClientCertificateValidation',
    description: "Gateway's client certificate validation config should be used for HTTPS traffic",
    features: ['Gateway', 'HTTPRoute', FEATURE],
    manifests: ['gateway-with-clientcertificate-validation.yaml'],
    traffic: true,
    run: async (s) => {
      const addr = await routesReady(s, ref('client-validation-default'), [
        ref('client-certificate-validation-https-test'),
        ref('client-certificate-validation-https-test-no-hostname'),
      ]);
      const c = await certificates(s);
      // The default configuration (port 443): its CA's client served, the per-port CA's refused.
      await served(s, at(addr, 443), c.ca, 'example.org', 'infra-backend-v1', c.client);
      await refused(s, at(addr, 443), c.ca, 'example.org', c.perPort);
      // The per-port configuration (8443): the other way round.
      await served(s, at(addr, 8443), c.ca, 'second-example.org', 'infra-backend-v2', c.perPort);
      await refused(s, at(addr, 8443), c.ca, 'second-example.org', c.client);
    },
  },
  {
    shortName: 'GatewayFrontendClientCertificateValidationInsecureFallback',
    description:
      "Gateway's client certificate validation set to AllowInsecureFallback allows any HTTPS traffic.",
    features: ['Gateway', 'HTTPRoute', FEATURE, `${FEATURE}InsecureFallback`],
    manifests: ['gateway-with-clientcertificate-validation-insecure-fallback.yaml'],
    traffic: true,
    run: async (s) => {
      const gw = ref('client-validation-insecure-fallback');
      const addr = await routesReady(s, gw, [
        ref('client-cert-validation-insecure-fallback-test'),
        ref('client-cert-validation-insecure-fallback-test-no-hostname'),
      ]);
      await s.status.gatewayCondition(gw, {
        type: 'InsecureFrontendValidationMode',
        status: 'True',
        reason: 'ConfigurationChanged',
      });
      const c = await certificates(s);
      for (const client of [c.client, c.perPort, undefined]) {
        await served(s, at(addr, 443), c.ca, 'example.org', 'infra-backend-v1', client);
        await served(s, at(addr, 8443), c.ca, 'second-example.org', 'infra-backend-v2', client);
      }
    },
  },
  {
    shortName: 'GatewayInvalidFrontendClientCertificateValidation',
    description: "Gateway's should reject invalid Client Certificate Validation Config",
    features: ['Gateway', 'HTTPRoute', 'ReferenceGrant', FEATURE],
    manifests: ['gateway-with-invalid-clientcertificate-validation.yaml'],
    traffic: false,
    run: async (s) => {
      const gw = 'gateway-with-invalid-client-cert-validation';
      const noValidCa: Cond = { type: 'Accepted', status: 'False', reason: 'NoValidCACertificate' };
      const notProgrammed: Cond = { type: 'Programmed', status: 'False' };
      await listenerHas(s, gw, 'https', [
        { type: 'ResolvedRefs', status: 'True' },
        { type: 'Accepted', status: 'True' },
        { type: 'Programmed', status: 'True' },
      ]);
      for (const [listener, reason] of [
        ['https-unresolved', 'InvalidCACertificateRef'],
        ['https-invalid-kind', 'InvalidCACertificateKind'],
        ['https-grant-missing', 'RefNotPermitted'],
      ] as const)
        await listenerHas(s, gw, listener, [
          { type: 'ResolvedRefs', status: 'False', reason },
          noValidCa,
          notProgrammed,
        ]);
    },
  },
  {
    shortName: 'GatewayFrontendInvalidDefaultClientCertificateValidation',
    description:
      "Invalid Gateway's default Client Certificate Validation Config should only affect HTTPS traffic",
    features: ['Gateway', 'HTTPRoute', FEATURE],
    manifests: ['gateway-invalid-default-frontend-client-certificate-validation.yaml'],
    traffic: true,
    run: async (s) => {
      const gw = ref('invalid-default-client-validation-config');
      const addr = await s.status.gatewayAddress(gw);
      const c = await certificates(s);
      await listenerHas(s, gw.name, 'http', [
        { type: 'ResolvedRefs', status: 'True' },
        { type: 'Accepted', status: 'True' },
        { type: 'Programmed', status: 'True' },
      ]);
      if (s.sendsTraffic)
        await expectEventually(
          at(addr, 80),
          {
            request: { host: 'example.org', path: '/' },
            response: { statusCode: 200 },
            backend: 'infra-backend-v1',
            namespace: INFRA,
          },
          s.timeouts,
        );
      await listenerHas(s, gw.name, 'https', [
        { type: 'ResolvedRefs', status: 'False', reason: 'InvalidCACertificateRef' },
        { type: 'Accepted', status: 'False', reason: 'NoValidCACertificate' },
        { type: 'Programmed', status: 'False' },
      ]);
      await refused(s, at(addr, 443), c.ca, 'example.org', undefined);
    },
  },
];
