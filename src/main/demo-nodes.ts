/**
 * A simulated node of the demo (and of the conformance rig): the Node object, Ready with its
 * InternalIP addresses as a kubelet reports them, and its NodePortLocal agent forwarding in
 * userspace (ports 61000-61999), started. The caller stops the agent.
 */
import type { KubeConfig } from '@kubernetes/client-node';
import { AgentMetrics } from '../agent/metrics.ts';
import { NplAgent } from '../agent/npl-controller.ts';
import { UserspaceBackend } from '../agent/rules/userspace.ts';
import { EventRecorder } from '../kube/events.ts';
import type { Logger } from '../runtime/logger.ts';
import { patchStatus, post } from './demo-app.ts';

export async function startNodeAgent(
  kc: KubeConfig,
  name: string,
  addresses: string[],
  logger: Logger,
  /** The node's Pod CIDRs, one per family (the Pods the sandbox's kubelet runs get addresses of them). */
  podCIDRs: string[] = [],
): Promise<NplAgent> {
  await post(kc, '/api/v1/nodes', {
    metadata: { name },
    ...(podCIDRs.length > 0 ? { spec: { podCIDR: podCIDRs[0], podCIDRs } } : {}),
  });
  await patchStatus(kc, `/api/v1/nodes/${name}`, {
    status: {
      addresses: addresses.map((address) => ({ type: 'InternalIP', address })),
      conditions: [{ type: 'Ready', status: 'True' }],
    },
  });
  const agent = new NplAgent({
    kubeConfig: kc,
    nodeName: name,
    portRange: { start: 61000, end: 61999 },
    backend: new UserspaceBackend(),
    metrics: new AgentMetrics(),
    events: new EventRecorder(kc, 'npl-lb-agent', name, { logger }),
    logger,
  });
  await agent.start();
  return agent;
}
