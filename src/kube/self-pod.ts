/**
 * The controller's own Pod, from the downward API (`POD_NAME`, `POD_NAMESPACE`): where Events about
 * the load balancer as a whole go (it stops or starts answering), as the vendors' controllers write them on their Pods.
 * Out of a cluster (the demo, a laptop), or when the read fails, there is none and those Events
 * are logged only.
 */
import type { KubeConfig } from '@kubernetes/client-node';
import { z } from 'zod';
import { errorMessage } from '../runtime/errors.ts';
import type { Logger } from '../runtime/logger.ts';
import type { EventTarget } from './events.ts';
import { getJson } from './raw-client.ts';

const podList = z.object({
  items: z.array(
    z.object({
      metadata: z.object({ name: z.string().min(1), namespace: z.string().min(1), uid: z.string().min(1) }),
    }),
  ),
});

export async function selfPod(
  kc: KubeConfig,
  env: NodeJS.ProcessEnv,
  log: Logger,
): Promise<EventTarget | undefined> {
  const name = env.POD_NAME;
  const namespace = env.POD_NAMESPACE;
  if (!name || !namespace) return undefined;
  try {
    // A list by name: the controller may list and watch Pods, not get them.
    const raw = await getJson(kc, `/api/v1/namespaces/${encodeURIComponent(namespace)}/pods`, {
      fieldSelector: `metadata.name=${name}`,
    });
    const pod = podList.parse(raw).items.find((p) => p.metadata.name === name);
    if (!pod) throw new Error('not found');
    return { kind: 'Pod', apiVersion: 'v1', ...pod.metadata };
  } catch (err) {
    log.warn(
      { err: errorMessage(err), pod: `${namespace}/${name}` },
      'cannot read our own Pod: device-wide Events are logged only',
    );
    return undefined;
  }
}
