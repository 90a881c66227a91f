/**
 * Small API calls of the demo (and of the conformance rig): objects created, statuses written,
 * addresses read, and the status a kubelet reports for a Pod nothing runs (the controller's own).
 * The app's Pods are the sandbox kubelet's (src/sandbox/images/demo-web.mjs).
 */
import type { KubeConfig } from '@kubernetes/client-node';
import { request } from 'undici';
import { getJson, type RawObject } from '../kube/raw-client.ts';

/**
 * A Pod's status as the kubelet reports a started, ready one (the demo plays kubelet): Running,
 * its conditions, and one ready container, so `kubectl get pods` shows 1/1 Running.
 */
export function runningStatus(ips: string[], container: string, hostIP: string): object {
  const at = new Date().toISOString().replace(/\.\d{3}Z$/, 'Z');
  const cond = (type: string) => ({ type, status: 'True', lastTransitionTime: at });
  return {
    phase: 'Running',
    podIP: ips[0],
    podIPs: ips.map((ip) => ({ ip })),
    hostIP,
    startTime: at,
    conditions: ['PodReadyToStartContainers', 'Initialized', 'Ready', 'ContainersReady', 'PodScheduled'].map(
      cond,
    ),
    containerStatuses: [
      {
        name: container,
        ready: true,
        started: true,
        restartCount: 0,
        image: 'demo/web',
        imageID: 'demo/web@sha256:0',
        state: { running: { startedAt: at } },
      },
    ],
  };
}

/** Creates an object; resolves with what the API server stored. */
export async function post(kc: KubeConfig, path: string, body: object): Promise<unknown> {
  const cluster = kc.getCurrentCluster()!;
  const res = await fetch(`${cluster.server}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  if (res.status >= 300) throw new Error(`POST ${path}: ${res.status} ${await res.text()}`);
  return (await res.json()) as unknown;
}

export async function patchStatus(kc: KubeConfig, path: string, body: object): Promise<void> {
  const cluster = kc.getCurrentCluster()!;
  const res = await fetch(`${cluster.server}${path}/status`, {
    method: 'PATCH',
    headers: { 'content-type': 'application/merge-patch+json' },
    body: JSON.stringify(body),
  });
  if (res.status >= 300) throw new Error(`PATCH ${path}/status: ${res.status} ${await res.text()}`);
}

export async function answers(url: string, host?: string): Promise<boolean> {
  try {
    const res = await request(url, {
      headers: host ? { host } : {},
      headersTimeout: 2000,
      bodyTimeout: 2000,
    });
    await res.body.dump();
    return res.statusCode === 200;
  } catch {
    return false;
  }
}

export async function vipOf(kc: KubeConfig, path: string): Promise<string | undefined> {
  const o = (await getJson(kc, path, {}).catch(() => undefined)) as RawObject | undefined;
  const ingress = (o?.status as { loadBalancer?: { ingress?: { ip?: string }[] } } | undefined)?.loadBalancer
    ?.ingress;
  return ingress?.[0]?.ip;
}

/** A Gateway's address, once published. */
export async function gatewayVipOf(kc: KubeConfig, path: string): Promise<string | undefined> {
  const o = (await getJson(kc, path, {}).catch(() => undefined)) as RawObject | undefined;
  return (o?.status as { addresses?: { value?: string }[] } | undefined)?.addresses?.[0]?.value;
}
