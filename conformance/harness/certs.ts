/**
 * The certificates the upstream suite makes at setup (conformance/utils/suite: self-signed ones,
 * a CA in a ConfigMap, and certificates that CA signs), for the same names, fresh each run.
 */
import { generate } from 'selfsigned';
import type { Api } from './objects.ts';

const INFRA = 'gateway-conformance-infra';
const YEAR = 365 * 24 * 3600 * 1000;

interface Pem {
  cert: string;
  key: string;
}

/** EC P-256, SHA-256, valid from an hour ago for a year. */
const common = () =>
  ({
    keyType: 'ec',
    curve: 'P-256',
    algorithm: 'sha256',
    notBeforeDate: new Date(Date.now() - 3600 * 1000),
    notAfterDate: new Date(Date.now() + YEAR),
  }) as const;

async function certificate(dns: string[], ca?: Pem): Promise<Pem> {
  const pems = await generate([{ name: 'commonName', value: dns[0]! }], {
    ...common(),
    extensions: [
      { name: 'basicConstraints', cA: false },
      { name: 'keyUsage', digitalSignature: true, keyEncipherment: true },
      { name: 'subjectAltName', altNames: dns.map((value) => ({ type: 2 as const, value })) },
    ],
    ...(ca ? { ca } : {}),
  });
  return { cert: pems.cert, key: pems.private };
}

/** A client certificate (clientAuth) signed by `ca` (MustCreateCASignedClientCertSecret). */
async function clientCertificate(ca: Pem): Promise<Pem> {
  const pems = await generate([{ name: 'commonName', value: 'gateway-conformance-client' }], {
    ...common(),
    extensions: [
      { name: 'basicConstraints', cA: false },
      { name: 'keyUsage', digitalSignature: true, keyEncipherment: true },
      { name: 'extKeyUsage', clientAuth: true },
    ],
    ca,
  });
  return { cert: pems.cert, key: pems.private };
}

async function authority(name: string): Promise<Pem> {
  const pems = await generate([{ name: 'commonName', value: name }], {
    ...common(),
    extensions: [
      { name: 'basicConstraints', cA: true },
      { name: 'keyUsage', keyCertSign: true, cRLSign: true, digitalSignature: true },
    ],
  });
  return { cert: pems.cert, key: pems.private };
}

const b64 = (s: string) => Buffer.from(s, 'utf8').toString('base64');

async function secret(api: Api, namespace: string, name: string, c: Pem): Promise<void> {
  await api.request('POST', `/api/v1/namespaces/${namespace}/secrets`, {
    metadata: { namespace, name },
    type: 'kubernetes.io/tls',
    data: { 'tls.crt': b64(c.cert), 'tls.key': b64(c.key) },
  });
}

/** Creates the suite's Secrets and CA ConfigMap (the namespaces exist). */
export async function createSuiteCertificates(api: Api): Promise<void> {
  await secret(api, 'gateway-conformance-web-backend', 'certificate', await certificate(['*']));
  await secret(
    api,
    INFRA,
    'tls-validity-checks-certificate',
    await certificate(['*', '*.org', '*.wildcard.org']),
  );
  const ca = await authority('gateway-conformance-tls-checks-ca');
  await api.request('POST', `/api/v1/namespaces/${INFRA}/configmaps`, {
    metadata: { namespace: INFRA, name: 'tls-checks-ca-certificate' },
    data: { 'ca.crt': ca.cert },
  });
  // The client certificate a Gateway presents to backends (GatewayTLSBackendClientCertificate),
  // signed by the CA the backend verifies clients with.
  await secret(api, INFRA, 'tls-checks-client-certificate', await clientCertificate(ca));
  // upstream adds a URI SAN (spiffe://abc.example.com/test-identity) the TLS tests do not read.
  await secret(
    api,
    INFRA,
    'tls-checks-certificate',
    await certificate(['abc.example.com', 'other.example.com'], ca),
  );
  // A CA nothing is signed by, for BackendTLSPolicy tests that must fail validation.
  await api.request('POST', `/api/v1/namespaces/${INFRA}/configmaps`, {
    metadata: { namespace: INFRA, name: 'mismatch-ca-certificate' },
    data: { 'ca.crt': (await authority('gateway-conformance-mismatch-ca')).cert },
  });
  // The client certificate validation tests' CAs (default and per port) and a client of each.
  for (const [cm, client] of [
    ['tls-validity-checks-ca-certificate', 'tls-validity-checks-client-certificate'],
    ['tls-validity-checks-per-port-ca-certificate', 'tls-validity-checks-per-port-client-certificate'],
  ] as const) {
    const clients = await authority(cm);
    await api.request('POST', `/api/v1/namespaces/${INFRA}/configmaps`, {
      metadata: { namespace: INFRA, name: cm },
      data: { 'ca.crt': clients.cert },
    });
    await secret(api, INFRA, client, await clientCertificate(clients));
  }
  // TLS listeners in Terminate mode (TLSRoute*Terminate*): the gateway's certificate.
  await secret(api, INFRA, 'tls-terminate-checks-certificate', await certificate(['tls.example.com'], ca));
  const passthrough = await certificate(['abc.example.com'], ca);
  await secret(api, INFRA, 'tls-passthrough-checks-certificate', passthrough);
  await secret(api, 'gateway-conformance-app-backend', 'tls-passthrough-checks-certificate', passthrough);
}
