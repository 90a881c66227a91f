/**
 * The harness as kube-controller-manager, scheduler and kubelet for the upstream echo Deployments:
 * each replica is a Pod bound to a node, with its own loopback address, reported Running and
 * Ready, whose echo server really answers on the container's port. Deployments of other images
 * (the TLS, gRPC, TCP and DNS backends) get no Pods: a test needing them is skipped, said.
 */
import type { Server } from 'node:http';
import { runningStatus } from '../../src/main/demo-app.ts';
import { templateHash } from '../../src/sandbox/workload-pods.ts';
import type { Json } from '../../src/sandbox/openapi.ts';
import { closeServer, startEcho } from './echo.ts';
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
  template?: { metadata?: { labels?: Record<string, string> }; spec?: { containers?: Container[] } };
}

/** Whether a Deployment is the plain HTTP echo (not its TLS, gRPC or TCP modes). */
export function isPlainEcho(spec: DeploymentSpec): boolean {
  const cs = spec.template?.spec?.containers ?? [];
  const modes = new Set(['TLS_SERVER_CERT', 'GRPC_ECHO_SERVER', 'TCP_ECHO_SERVER']);
  return (
    cs.length === 1 &&
    (cs[0]!.image ?? '').includes('/echo-basic:') &&
    !(cs[0]!.env ?? []).some((e) => modes.has(e.name ?? ''))
  );
}

export interface Node {
  name: string;
  ip: string;
}

export class Kubelet {
  private readonly servers = new Map<string, Server[]>();
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
    if (!isPlainEcho(spec)) return 0;
    const ns = d.metadata.namespace ?? 'default';
    const key = `${ns}/${d.metadata.name}`;
    const servers: Server[] = [];
    this.servers.set(key, servers);
    const replicas = spec.replicas ?? 1;
    for (let i = 0; i < replicas; i++) {
      if (this.next > 250) throw new Error(`no Pod address left in ${this.podNet}.0/24`);
      const ip = `${this.podNet}.${this.next++}`;
      const node = this.nodes[i % this.nodes.length]!;
      // As a ReplicaSet names them: <deployment>-<template hash>-<suffix>.
      const pod = `${d.metadata.name}-${templateHash((spec.template ?? {}) as Json)}-${i}`;
      servers.push(await startEcho({ namespace: ns, pod }, ip, ECHO_PORT));
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

  /** The Pods' addresses of a Deployment this kubelet runs, by Pod name. */
  async podIPs(namespace: string, app: string): Promise<{ name: string; ip: string }[]> {
    const list = (await this.api.request(
      'GET',
      `/api/v1/namespaces/${namespace}/pods?labelSelector=${encodeURIComponent(`app=${app}`)}`,
    )) as { items: { metadata: { name: string }; status?: { podIP?: string } }[] };
    return list.items.flatMap((p) =>
      p.status?.podIP ? [{ name: p.metadata.name, ip: p.status.podIP }] : [],
    );
  }

  async stop(): Promise<void> {
    for (const list of this.servers.values()) for (const s of list) await closeServer(s);
    this.servers.clear();
  }
}
