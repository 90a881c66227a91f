/**
 * The harness as kube-controller-manager, scheduler and kubelet for the upstream echo Deployments:
 * each replica is a Pod bound to a node, with its own loopback address, reported Running and
 * Ready, whose echo server really answers on the container's port: echo-basic's HTTP (with its
 * h2c port beside it), HTTPS, TCP, TLS and gRPC modes. Deployments of other images (the DNS
 * backend) get no Pods: a test needing them is skipped, said.
 */
import type { Server as NetServer } from 'node:net';
import { runningStatus } from '../../src/main/demo-app.ts';
import { templateHash } from '../../src/sandbox/workload-pods.ts';
import type { Json } from '../../src/sandbox/openapi.ts';
import { closeServer, startEcho, startH2cEcho, startHttpsEcho } from './echo.ts';
import { startGrpcEcho } from './grpc-echo.ts';
import { startTcpEcho, startTlsEcho } from './tcp-echo.ts';
import type { Api, KubeObject } from './objects.ts';

/** echo-basic's HTTP port (its HTTP_PORT default). */
export const ECHO_PORT = 3000;

interface Container {
  name?: string;
  image?: string;
  env?: { name?: string }[];
}
interface DeploymentSpec {
  replicas?: number;
  template?: {
    metadata?: { labels?: Record<string, string> };
    spec?: { containers?: Container[]; volumes?: { secret?: { secretName?: string } }[] };
  };
}

/** echo-basic's TLS port (its HTTPS_PORT and TLS_PORT default). */
export const ECHO_TLS_PORT = 8443;
/** echo-basic's h2c port (its H2C_PORT default): HTTP/2 with prior knowledge. */
export const ECHO_H2C_PORT = 3001;

/**
 * Which of echo-basic's modes a Deployment runs: HTTP (with HTTPS beside it when it has a server
 * certificate), the TCP echo (plain, and TLS with a certificate), or gRPC; undefined for what the
 * harness does not play (UDP, DNS).
 */
export function echoMode(
  spec: DeploymentSpec,
): { mode: 'http' | 'tcp' | 'grpc'; certSecret?: string } | undefined {
  const cs = spec.template?.spec?.containers ?? [];
  if (cs.length !== 1 || !(cs[0]!.image ?? '').includes('/echo-basic:')) return undefined;
  const env = new Set((cs[0]!.env ?? []).map((e) => e.name ?? ''));
  if (env.has('UDP_ECHO_SERVER')) return undefined;
  if (env.has('GRPC_ECHO_SERVER')) return { mode: 'grpc' };
  const secret = spec.template?.spec?.volumes?.find((v) => v.secret?.secretName)?.secret?.secretName;
  const certSecret = env.has('TLS_SERVER_CERT') ? secret : undefined;
  return { mode: env.has('TCP_ECHO_SERVER') ? 'tcp' : 'http', ...(certSecret ? { certSecret } : {}) };
}

export interface Node {
  name: string;
  ip: string;
}

export class Kubelet {
  /** What stops each Deployment's Pods' servers. */
  private readonly servers = new Map<string, (() => Promise<void>)[]>();
  private next = 1;

  constructor(
    private readonly api: Api,
    private readonly nodes: Node[],
    /** The first three octets of the Pods' addresses (`127.0.81`). */
    private readonly podNet: string,
  ) {}

  /** Runs a Deployment's replicas; returns how many Pods it started (0: not an echo it plays). */
  async run(d: KubeObject): Promise<number> {
    const spec = (d as { spec?: DeploymentSpec }).spec ?? {};
    const echo = echoMode(spec);
    if (!echo) return 0;
    const ns = d.metadata.namespace ?? 'default';
    const key = `${ns}/${d.metadata.name}`;
    const cert = echo.certSecret ? await this.certificate(ns, echo.certSecret) : undefined;
    const servers: (() => Promise<void>)[] = [];
    this.servers.set(key, servers);
    const net = (s: NetServer) => servers.push(() => closeServer(s));
    const replicas = spec.replicas ?? 1;
    for (let i = 0; i < replicas; i++) {
      if (this.next > 250) throw new Error(`no Pod address left in ${this.podNet}.0/24`);
      const ip = `${this.podNet}.${this.next++}`;
      const node = this.nodes[i % this.nodes.length]!;
      // As a ReplicaSet names them: <deployment>-<template hash>-<suffix>.
      const pod = `${d.metadata.name}-${templateHash((spec.template ?? {}) as Json)}-${i}`;
      const id = { namespace: ns, pod };
      if (echo.mode === 'http') {
        net(await startEcho(id, ip, ECHO_PORT));
        net(await startH2cEcho(id, ip, ECHO_H2C_PORT));
        if (cert) net(await startHttpsEcho(id, ip, ECHO_TLS_PORT, cert));
      } else if (echo.mode === 'grpc') {
        const g = await startGrpcEcho(id, ip, ECHO_PORT);
        servers.push(() => g.close());
      } else {
        net(await startTcpEcho(id, ip, ECHO_PORT));
        if (cert) net(await startTlsEcho(id, ip, ECHO_TLS_PORT, cert));
      }
      const container = spec.template?.spec?.containers?.[0] ?? {};
      await this.api.request('POST', `/api/v1/namespaces/${ns}/pods`, {
        metadata: { name: pod, namespace: ns, labels: spec.template?.metadata?.labels ?? {} },
        spec: {
          nodeName: node.name,
          containers: [{ name: container.name ?? 'echo', image: container.image ?? 'echo-basic' }],
        },
      });
      await this.api.patch(`/api/v1/namespaces/${ns}/pods/${pod}/status`, {
        status: runningStatus([ip], container.name ?? 'echo', node.ip),
      });
    }
    return replicas;
  }

  /** A kubernetes.io/tls Secret's certificate and key (a volume the Pod mounts). */
  private async certificate(ns: string, name: string): Promise<{ cert: string; key: string }> {
    const secret = (await this.api.get(`/api/v1/namespaces/${ns}/secrets/${name}`)) as
      { data?: Record<string, string> } | undefined;
    const b64 = (k: string) => Buffer.from(secret?.data?.[k] ?? '', 'base64').toString('utf8');
    if (!secret || !b64('tls.crt') || !b64('tls.key'))
      throw new Error(`Secret ${ns}/${name} holds no certificate`);
    return { cert: b64('tls.crt'), key: b64('tls.key') };
  }

  async stop(): Promise<void> {
    for (const list of this.servers.values()) for (const close of list) await close();
    this.servers.clear();
  }
}
