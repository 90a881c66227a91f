/**
 * Whether the agent's DaemonSet is going away for good (helm uninstall, kubectl delete): then an
 * agent that stops removes its forwarding rules, since no agent will come back to own them. In a
 * rollout or a node drain the DaemonSet stays, and the rules stay so traffic keeps flowing.
 */
import { AppsV1Api, ApiException, type KubeConfig } from '@kubernetes/client-node';
import type { Logger } from '../runtime/logger.ts';
import type { ForwardingBackend } from './rules/types.ts';

export async function daemonSetGone(kc: KubeConfig, namespace: string, name: string): Promise<boolean> {
  try {
    const ds = await kc.makeApiClient(AppsV1Api).readNamespacedDaemonSet({ name, namespace });
    return ds.metadata?.deletionTimestamp !== undefined;
  } catch (err) {
    if (err instanceof ApiException && err.code === 404) return true;
    // Unknown (API server unreachable, RBAC): keep the rules; `npl-lb agent --cleanup` removes them.
    return false;
  }
}

/**
 * For a stopping agent started with `--cleanup-on-uninstall NAMESPACE/NAME`: removes the rules
 * when that DaemonSet is gone; true when it did.
 */
export async function cleanupIfUninstalled(
  kc: KubeConfig,
  daemonSet: string | undefined,
  backend: ForwardingBackend,
  log: Logger,
): Promise<boolean> {
  if (!daemonSet) return false;
  const [namespace, name] = daemonSet.split('/') as [string, string];
  if (!(await daemonSetGone(kc, namespace, name))) return false;
  await backend.cleanup();
  log.info({ daemonSet }, 'the agent DaemonSet is gone: forwarding rules removed');
  return true;
}
