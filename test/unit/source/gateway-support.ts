/**
 * Fixtures for the Gateway API source tests: the upstream conformance suite's base manifests (the
 * bundled v1.6.1 file, class `npl-lb`), parsed as the controller parses them, plus routes written
 * as the suite's tests write them, and a pass of the source over it all.
 */
import type { BackendTlsPolicy } from '../../../src/kube/backend-tls-objects.ts';
import type { ListenerSet } from '../../../src/kube/listener-set-objects.ts';
import { readFileSync } from 'node:fs';
import { parseAllDocuments } from 'yaml';
import type { HttpCapabilities } from '../../../src/adapter/contract.ts';
import { ALL_HTTP } from '../../../src/adapter/http-capabilities.ts';
import {
  type Gateway,
  type GatewayClass,
  gatewayClassSchema,
  gatewaySchema,
  type GrpcRouteObject,
  grpcRouteSchema,
  type HttpRouteObject,
  httpRouteSchema,
  type L4RouteObject,
  namespaceSchema,
  type ReferenceGrant,
  referenceGrantSchema,
} from '../../../src/kube/gateway-objects.ts';
import { type Service, serviceSchema, tlsSecretSchema } from '../../../src/kube/objects.ts';
import {
  gatewayVsName,
  h2PoolName,
  l7PoolName,
  poolName,
  retryPoolName,
  sessionPoolName,
  tlsPoolName,
} from '../../../src/model/names.ts';
import type { BackendTls, L7VirtualService, RouteRetry, SessionCookie } from '../../../src/model/types.ts';
import type { CaConfigMap } from '../../../src/kube/config-maps.ts';
import {
  buildGateways,
  type GatewayContext,
  type GatewayResult,
} from '../../../src/source/gateway/gateways.ts';
import type { ProtocolSupport } from '../../../src/source/gateway/listeners.ts';
import { secretCertificates } from '../../../src/source/secret-certificates.ts';
import type { ClusterView } from '../../../src/source/desired.ts';
import type { TestCertificate } from '../../support/certs.ts';
import { tlsSecret } from '../../support/certs.ts';

export const INFRA = 'gateway-conformance-infra';
export const WEB = 'gateway-conformance-web-backend';
export const APP = 'gateway-conformance-app-backend';
export const CONTROLLER = 'npl-lb.io/gateway-controller';

const BASE = readFileSync(
  new URL('../../support/specs/gateway-api/conformance-base-manifests-v1.6.1.yaml', import.meta.url),
  'utf8',
).replaceAll('{GATEWAY_CLASS_NAME}', 'npl-lb');

const docs = parseAllDocuments(BASE)
  .map((d) => d.toJSON() as { kind?: string; metadata?: Record<string, unknown> } | null)
  .filter((d): d is { kind: string; metadata: Record<string, unknown> } => !!d?.kind);
const stamp = <T extends { metadata: Record<string, unknown> }>(o: T, i: number): T => ({
  ...o,
  metadata: {
    generation: 1,
    resourceVersion: '1',
    creationTimestamp: `2026-01-01T00:00:${String(i).padStart(2, '0')}Z`,
    ...o.metadata,
  },
});

export const baseGateways = (): Gateway[] =>
  docs.filter((d) => d.kind === 'Gateway').map((d, i) => gatewaySchema.parse(stamp(d, i)));
export const baseServices = (): Service[] =>
  docs.filter((d) => d.kind === 'Service').map((d) => serviceSchema.parse(d));
export const baseNamespaces = () =>
  docs.filter((d) => d.kind === 'Namespace').map((d) => namespaceSchema.parse(d));

export const gatewayClass = (controllerName = CONTROLLER, name = 'npl-lb') =>
  gatewayClassSchema.parse({ metadata: { name, generation: 1 }, spec: { controllerName } });

/** A cluster of the suite's base manifests (Services, namespaces, Gateways, our class), and `extra`. */
export const baseView = (extra: Partial<ClusterView> = {}): ClusterView => ({
  services: baseServices(),
  ingresses: [],
  ingressClasses: [],
  pods: [],
  nodes: [],
  namespaces: baseNamespaces(),
  gatewayClasses: [gatewayClass()],
  gateways: baseGateways(),
  ...extra,
});

let created = 0;
/** An HTTPRoute as the suite's YAML gives it (defaults filled in by the schema, as the API server does). */
export function route(namespace: string, name: string, spec: Record<string, unknown>): HttpRouteObject {
  created++;
  return httpRouteSchema.parse({
    metadata: {
      namespace,
      name,
      generation: 1,
      creationTimestamp: `2026-01-02T00:00:${String(created % 60).padStart(2, '0')}Z`,
    },
    spec,
  });
}

/** A GRPCRoute as the suite's YAML gives it (defaults filled in by the schema). */
export function grpcRoute(namespace: string, name: string, spec: Record<string, unknown>): GrpcRouteObject {
  created++;
  return grpcRouteSchema.parse({
    metadata: {
      namespace,
      name,
      generation: 1,
      creationTimestamp: `2026-01-02T00:00:${String(created % 60).padStart(2, '0')}Z`,
    },
    spec,
  });
}

export const grant = (
  namespace: string,
  fromKind: string,
  fromNs: string,
  toKind: string,
  name?: string,
): ReferenceGrant =>
  referenceGrantSchema.parse({
    metadata: { namespace, name: `grant-${fromNs}` },
    spec: {
      from: [{ group: 'gateway.networking.k8s.io', kind: fromKind, namespace: fromNs }],
      to: [{ group: '', kind: toKind, ...(name ? { name } : {}) }],
    },
  });

export interface World {
  routes?: HttpRouteObject[];
  grpcRoutes?: GrpcRouteObject[];
  gateways?: Gateway[];
  listenerSets?: ListenerSet[];
  grants?: ReferenceGrant[];
  backendTlsPolicies?: BackendTlsPolicy[];
  /** ConfigMaps (their `ca.crt`: the policies' CA bundles). */
  configMaps?: CaConfigMap[];
  /** Filled with each TLS pool asked for (name -> its TLS), where `http.backendTls` is declared. */
  tlsPools?: Map<string, BackendTls>;
  /** Filled with each retry variant asked for (name -> its retries), where `http.retry` is declared. */
  retryPools?: Map<string, RouteRetry>;
  /** The session variants asked for, by name (a rule's sessionPersistence). */
  sessionPools?: Map<string, SessionCookie>;
  /** Extra namespace labels by name (the base manifests label infra, web and app backends). */
  labels?: Record<string, Record<string, string>>;
  secrets?: { namespace: string; name: string; cert: TestCertificate }[];
  http?: HttpCapabilities;
  support?: Partial<ProtocolSupport>;
  vips?: Record<string, string | undefined>;
  bundleVersion?: string;
  l4?: { tcpRoutes?: L4RouteObject[]; udpRoutes?: L4RouteObject[]; tlsRoutes?: L4RouteObject[] };
  /** Our classes instead of the one `npl-lb` class (the other controller's stays). */
  classes?: GatewayClass[];
  /** How parameters references resolve (parameters.ts); absent: none are read. */
  parametersOf?: GatewayContext['parametersOf'];
}

/** The pool of a base Service's port, as the source names it (by the port's name when it has one). */
export function pool(ns: string, svc: string, port = 8080): string {
  const s = baseServices().find((x) => x.metadata.namespace === ns && x.metadata.name === svc);
  const sp = s?.spec.ports.find((p) => p.port === port);
  if (!sp) throw new Error(`no base Service ${ns}/${svc} port ${port}`);
  return l7PoolName('c1', { namespace: ns, name: svc }, sp.name || sp.port);
}

export function pass(w: World): GatewayResult {
  const namespaces = baseNamespaces().map((n) =>
    w.labels?.[n.metadata.name]
      ? { ...n, metadata: { ...n.metadata, labels: { ...n.metadata.labels, ...w.labels[n.metadata.name] } } }
      : n,
  );
  const services = new Map(baseServices().map((s) => [`${s.metadata.namespace}/${s.metadata.name}`, s]));
  const secrets = (w.secrets ?? []).map((s, i) =>
    tlsSecretSchema.parse({
      ...tlsSecret(s.namespace, s.name, s.cert),
      metadata: { namespace: s.namespace, name: s.name, resourceVersion: String(i + 1), uid: `u${i}` },
    }),
  );
  return buildGateways(
    {
      gatewayClasses: [...(w.classes ?? [gatewayClass()]), gatewayClass('example.com/other', 'other')],
      gateways: w.gateways ?? baseGateways(),
      listenerSets: w.listenerSets ?? [],
      httpRoutes: w.routes ?? [],
      grpcRoutes: w.grpcRoutes ?? [],
      ...w.l4,
      referenceGrants: w.grants ?? [],
      backendTlsPolicies: w.backendTlsPolicies ?? [],
      configMaps: w.configMaps ?? [],
      namespaces,
      bundleVersion: w.bundleVersion,
    },
    {
      cluster: 'c1',
      controllerName: CONTROLLER,
      adapter: 'memory',
      support: { HTTP: true, HTTPS: true, TLS: false, TCP: false, UDP: false, ...w.support },
      // The memory device: every match, filter and split of the model, CORS included.
      http: w.http ?? { ...ALL_HTTP, cors: true },
      services,
      poolFor: (svc, sp) => l7PoolName('c1', svc.metadata, sp.name || sp.port),
      h2PoolFor: w.http?.http2 ? (svc, sp) => h2PoolName('c1', svc.metadata, sp.name || sp.port) : undefined,
      tlsPoolFor: w.http?.backendTls
        ? (svc, sp, tls) => {
            const name = tlsPoolName('c1', svc.metadata, sp.name || sp.port, tls);
            w.tlsPools?.set(name, tls);
            return name;
          }
        : undefined,
      variantPoolFor:
        w.http?.retry || w.http?.sessionCookie
          ? (make, { retry, session }) => {
              const retried = retry ? retryPoolName(make(), retry) : make();
              if (retry) w.retryPools?.set(retried, retry);
              const name = session ? sessionPoolName(retried, session) : retried;
              if (session) w.sessionPools?.set(name, session);
              return name;
            }
          : undefined,
      l4PoolFor: (svc, sp) => poolName('c1', svc.metadata.namespace, svc.metadata.name, sp.name || sp.port),
      l4TlsPoolFor:
        w.http?.backendTls && w.support?.tlsTerminate
          ? (svc, sp, tls) => {
              const name = tlsPoolName('c1', svc.metadata, sp.name || sp.port, tls, 'tcptls');
              w.tlsPools?.set(name, tls);
              return name;
            }
          : undefined,
      certificateOf: secretCertificates(secrets, 'c1', Date.now()),
      ...(w.parametersOf ? { parametersOf: w.parametersOf } : {}),
      vipOf: (gw) => {
        const k = `${gw.namespace}/${gw.name}`;
        const vip = w.vips && k in w.vips ? w.vips[k] : '192.0.2.10';
        return vip ? { vip } : { problem: 'no free VIP in vip.cidrs', reason: 'NoVIP' };
      },
    },
  );
}

/** The conditions of a route's parents as `Type=Status/Reason`. */
export function parentConditions(r: GatewayResult, key: string, kind = 'HTTPRoute'): string[][] {
  return (r.routes.get(`${kind} ${key}`)?.parents ?? []).map((p) =>
    p.conditions.map((c) => `${c.type}=${c.status ? 'True' : 'False'}/${c.reason}`),
  );
}

export function listenerConditions(r: GatewayResult, gw: string, listener: string): string[] {
  const l = r.gateways.get(gw)?.listeners.find((x) => x.name === listener);
  return (l?.conditions ?? []).map((c) => `${c.type}=${c.status ? 'True' : 'False'}/${c.reason}`);
}

export const vsOf = (r: GatewayResult, gateway: string, protocol = 'HTTP', port = 80) =>
  r.virtualServices.find(
    (v): v is L7VirtualService =>
      v.kind === 'l7' &&
      v.name ===
        gatewayVsName(
          'c1',
          { namespace: gateway.split('/')[0]!, name: gateway.split('/')[1]! },
          protocol,
          port,
        ),
  );

export const backend = (name: string, port = 8080, extra: Record<string, unknown> = {}) => ({
  name,
  port,
  ...extra,
});
export const parent = (name: string, extra: Record<string, unknown> = {}) => ({
  name,
  namespace: INFRA,
  ...extra,
});
