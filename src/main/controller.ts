/**
 * `npl-lb controller`: composition root of the load-balancer controller.
 */
import { hostname } from 'node:os';
import { VENDORS } from '../../adapters/index.ts';
import { AdapterCheckError } from '../adapter/contract.ts';
import { loadControllerConfig } from '../config/controller-config.ts';
import { CONTROLLER_HELP, parseControllerFlags } from '../config/controller-flags.ts';
import { loadKubeConfig } from '../kube/client.ts';
import { EventRecorder } from '../kube/events.ts';
import { selfPod } from '../kube/self-pod.ts';
import { ErrorCodes, NplError } from '../runtime/errors.ts';
import { Registry } from 'prom-client';
import type { LoadBalancerAdapter } from '../adapter/contract.ts';
import type { ControllerFlags } from '../config/controller-flags.ts';
import { deleteOwnedConfig, scaleDownAndWait } from '../controller/delete-config.ts';
import { createLogger, type Logger } from '../runtime/logger.ts';
import { serveStatus } from '../runtime/status-server.ts';
import { startControllerRole } from './controller-role.ts';
import { runUntilSignal } from './lifecycle.ts';
import { GateWebhook } from './gate-webhook.ts';

export async function runController(argv: string[]): Promise<number> {
  const flags = parseControllerFlags(argv);
  if (flags.help) {
    process.stdout.write(CONTROLLER_HELP);
    return 0;
  }
  const config = loadControllerConfig(flags.config!);
  const vendor = VENDORS.find((v) => v.type === config.adapter.type);
  if (!vendor) {
    throw new NplError(
      ErrorCodes.CONFIG_INVALID,
      `${flags.config}: adapter.type: unknown adapter "${config.adapter.type}" (known: ${VENDORS.map((v) => v.type).join(', ')})`,
    );
  }
  const log = createLogger({ name: 'controller', format: flags['log-format'], level: flags['log-level'] });
  const stopTimeoutMs = flags['shutdown-timeout'] * 1000;
  const { kc, origin } = loadKubeConfig({ flag: flags.kubeconfig });
  const adapter = vendor.create({ owner: config.clusterName, settings: config.adapter, env: process.env });
  try {
    for (const warning of (await adapter.verify?.()) ?? []) log.warn({ adapter: adapter.name }, warning);
  } catch (err) {
    if (!(err instanceof AdapterCheckError)) throw err;
    if (err.terminal) throw new NplError(ErrorCodes.ADAPTER_CHECK_FAILED, err.message);
    // Unreachable for now: the reconcile retries with backoff until it is back.
    log.warn({ err: err.message }, 'load balancer not reachable yet; retrying in the background');
  }
  if (flags['delete-config']) {
    if (flags['scale-down']) await scaleDownAndWait(kc, flags['scale-down'], log);
    return runDeleteConfig(adapter, log, flags, stopTimeoutMs);
  }
  const role = await startControllerRole({
    kubeConfig: kc,
    config,
    adapter,
    events: new EventRecorder(kc, 'npl-lb-controller', config.clusterName, { logger: log }),
    logger: log,
    self: await selfPod(kc, process.env, log),
    httpAddress: flags['http-address'],
    ...(flags['leader-elect']
      ? {
          election: {
            namespace: process.env.POD_NAMESPACE ?? flags['lease-namespace'],
            name: flags['lease-name'],
            identity: `${hostname()}-${process.pid}`,
          },
        }
      : {}),
  });
  // The readiness gate injection webhook: every replica serves it (it reads Services itself).
  const address = flags['webhook-address'];
  const webhook = address
    ? new GateWebhook({
        kubeConfig: kc,
        config,
        log,
        host: address.host,
        port: address.port,
        namespace: process.env.POD_NAMESPACE ?? flags['lease-namespace'],
        secretName: flags['webhook-secret'],
        serviceName: flags['webhook-service'],
        configurationName: flags['webhook-configuration'],
        checkMs: flags['webhook-check-seconds'] * 1000,
      })
    : undefined;
  log.info(
    {
      cluster: config.clusterName,
      adapter: adapter.name,
      kubeconfig: origin,
      http: role.url,
      leaderElection: flags['leader-elect'],
      ...(address ? { webhook: `${address.host}:${address.port}` } : {}),
    },
    'controller starting',
  );
  return runUntilSignal(
    {
      ...role,
      start: async () => {
        if (webhook) await webhook.start();
        await role.start();
      },
      stop: async () => {
        await webhook?.stop();
        await role.stop();
      },
    },
    log,
    flags['leader-elect']
      ? 'stopping; draining in-flight work and releasing the Lease'
      : 'stopping; draining in-flight work',
    { ...(flags['leader-elect'] ? { failure: role.lost } : {}), stopTimeoutMs },
  );
}

/**
 * `--delete-config`: remove what we own on the load balancer, then idle (Ready, reconciling
 * nothing) until stopped, as the vendors' controllers' deleteConfig does; with `--once` exit when done (the Helm
 * pre-delete hook).
 */
async function runDeleteConfig(
  adapter: LoadBalancerAdapter,
  log: Logger,
  flags: ControllerFlags,
  stopTimeoutMs: number,
): Promise<number> {
  let done = false;
  const status = await serveStatus(flags['http-address'], new Registry(), () => done);
  log.info({ http: status.url, once: flags.once }, 'deleteConfig: removing every object this cluster owns');
  try {
    await deleteOwnedConfig(adapter, log);
  } catch (err) {
    await adapter.close();
    await status.close();
    throw err;
  }
  done = true;
  if (flags.once) {
    await adapter.close();
    await status.close();
    return 0;
  }
  log.info('deleteConfig: done; idling (set deleteConfig back to false to resume)');
  return runUntilSignal(
    {
      start: async () => {},
      stop: async () => {
        await adapter.close();
        await status.close();
      },
    },
    log,
    'stopping',
    { stopTimeoutMs },
  );
}
