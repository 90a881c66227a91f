/**
 * `npl-lb agent`: composition root of the node-side NodePortLocal agent.
 */
import { hostname } from 'node:os';
import { NplAgent } from '../agent/npl-controller.ts';
import { AgentMetrics } from '../agent/metrics.ts';
import { serveStatus } from '../runtime/status-server.ts';
import { IptablesBackend } from '../agent/rules/iptables.ts';
import { noneBackend } from '../agent/rules/none.ts';
import type { ForwardingBackend, ForwardingMode } from '../agent/rules/types.ts';
import { UserspaceBackend } from '../agent/rules/userspace.ts';
import { AGENT_HELP, type AgentFlags, parseAgentFlags } from '../config/agent-flags.ts';
import { loadKubeConfig } from '../kube/client.ts';
import { EventRecorder } from '../kube/events.ts';
import { cleanupIfUninstalled } from '../agent/uninstall.ts';
import { createLogger, type Logger } from '../runtime/logger.ts';
import { runUntilSignal } from './lifecycle.ts';

export function backendFor(mode: ForwardingMode, log: Logger): ForwardingBackend {
  if (mode === 'iptables') return new IptablesBackend({ logger: log });
  if (mode === 'userspace') return new UserspaceBackend();
  return noneBackend();
}

export async function runAgent(argv: string[]): Promise<number> {
  const flags: AgentFlags = parseAgentFlags(argv);
  if (flags.help) {
    process.stdout.write(AGENT_HELP);
    return 0;
  }
  const log = createLogger({ name: 'agent', format: flags['log-format'], level: flags['log-level'] });
  if (flags.cleanup) {
    await new IptablesBackend({ logger: log }).cleanup();
    log.info('removed the NPL-LB chain and its jumps');
    return 0;
  }
  const nodeName = flags['node-name']!;
  const { kc, origin } = loadKubeConfig({ flag: flags.kubeconfig });
  const metrics = new AgentMetrics();
  const backend = backendFor(flags.forwarding, log);
  const agent = new NplAgent({
    kubeConfig: kc,
    nodeName,
    portRange: flags['port-range'],
    backend,
    metrics,
    events: new EventRecorder(kc, 'npl-lb-agent', nodeName, { logger: log }),
    nodeIpPreference: flags['node-ip-preference'],
    resyncIntervalMs: flags['resync-interval'] * 1000,
    logger: log,
  });
  const status = await serveStatus(flags['http-address'], metrics.registry, () => agent.isReady);
  log.info(
    { node: nodeName, kubeconfig: origin, forwarding: flags.forwarding, http: status.url, host: hostname() },
    'agent starting',
  );
  return runUntilSignal(
    {
      start: () => agent.start(),
      stop: async () => {
        await agent.stop();
        await status.close();
        await cleanupIfUninstalled(kc, flags['cleanup-on-uninstall'], backend, log);
      },
    },
    log,
    flags['cleanup-on-uninstall']
      ? 'stopping; forwarding rules stay in place unless the DaemonSet is gone'
      : 'stopping; forwarding rules stay in place',
  );
}
