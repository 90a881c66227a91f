/**
 * Fixtures for tests of several clusters on one load balancer: a sandbox cluster with one node,
 * a LoadBalancer Service `web` with one annotated Pod and an Ingress `shop` of our class; and a
 * controller on it with a given adapter, stopped (with its adapter) when the test ends; an Avi
 * adapter for the simulator.
 */
import type { TestContext } from 'node:test';
import type { KubeConfig } from '@kubernetes/client-node';
import { AviAdapter, type AviAdapterOptions } from '../../adapters/avi/adapter.ts';
import type { LoadBalancerAdapter } from '../../src/adapter/contract.ts';
import { parseControllerConfig } from '../../src/config/controller-config.ts';
import { NplController } from '../../src/controller/controller.ts';
import { Cluster, RecordingEvents } from './cluster.ts';
import { useSandbox } from './sandbox.ts';

export async function webCluster(t: TestContext, nodeIP: string, port: number) {
  const { kc } = await useSandbox(t);
  const c = new Cluster(kc);
  await c.node('n1', { internal: [nodeIP] });
  await c.service('web', {
    type: 'LoadBalancer',
    enabled: null,
    ports: [{ name: 'http', port: 80, targetPort: 'http' }],
  });
  await c.nplPod('web-1', { node: 'n1', entries: [{ nodeIP, nodePort: port }] });
  await c.ingressClass();
  await c.ingress('shop', { host: 'shop.example.com', service: 'web', port: 80 });
  return { kc, c };
}

/** An Avi adapter for the simulator at `url` (its credentials, API version 22.1.3, tenant admin). */
export const aviAdapter = (url: string, extra: Partial<AviAdapterOptions> = {}): AviAdapter =>
  new AviAdapter({
    owner: 'c1',
    url,
    username: 'admin',
    password: 'admin',
    version: '22.1.3',
    tenant: 'admin',
    ...extra,
  });

export async function runController(
  t: TestContext,
  kc: KubeConfig,
  adapter: LoadBalancerAdapter & { close(): Promise<void> },
  name: string,
  /** vip.cidrs inside its brackets: one CIDR, or several separated by commas (IPv6 ones quoted). */
  cidr: string,
  events = new RecordingEvents(),
) {
  const ctl = new NplController({
    kubeConfig: kc,
    config: parseControllerConfig(
      `clusterName: ${name}\ndefaultLoadBalancer: true\nvip: {cidrs: [${cidr}]}\n`,
    ),
    adapter,
    events,
    coalesceMs: 20,
    sweepIntervalMs: 0,
  });
  let stopped = false;
  const stop = async () => {
    if (stopped) return;
    stopped = true;
    await ctl.stop();
    await adapter.close();
  };
  t.after(stop);
  await ctl.start();
  return { ctl, stop, events };
}
