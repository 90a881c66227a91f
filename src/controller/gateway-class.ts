/**
 * The GatewayClass the configuration names (`gatewayClass`, the chart's gatewayClass.name): the
 * controller creates it whenever the Gateway API is installed and the class is not there: the CRDs
 * installed before or after npl-lb, or the class deleted (a chart template gated on `.Capabilities`
 * rendered it only when the CRDs were there at install time, and never under `helm template`). An
 * existing class of that name is left as it is, whoever made it. At most one create a minute.
 */
import type { KubeConfig } from '@kubernetes/client-node';
import { KubeApiError, postJson } from '../kube/raw-client.ts';
import type { Logger } from '../runtime/logger.ts';

const RETRY_MS = 60_000;

export class GatewayClassKeeper {
  private lastTry = -Infinity;

  constructor(
    private readonly o: {
      name: string | undefined;
      controllerName: string;
      create: (body: object) => Promise<void>;
      log: Logger;
      now?: () => number;
    },
  ) {}

  /** Called with each pass's view: whether the Gateway API is installed and the classes there are. */
  async keep(installed: boolean, classes: readonly { metadata: { name: string } }[]): Promise<void> {
    const name = this.o.name;
    if (!name || !installed || classes.some((c) => c.metadata.name === name)) return;
    const now = (this.o.now ?? Date.now)();
    if (now - this.lastTry < RETRY_MS) return;
    this.lastTry = now;
    try {
      await this.o.create({
        apiVersion: 'gateway.networking.k8s.io/v1',
        kind: 'GatewayClass',
        metadata: { name, labels: { 'app.kubernetes.io/managed-by': 'npl-lb' } },
        spec: {
          controllerName: this.o.controllerName,
          description: 'Gateways served by npl-lb on NodePortLocal members',
        },
      });
      this.o.log.info({ gatewayClass: name }, 'created the GatewayClass');
    } catch (err) {
      // AlreadyExists: made meanwhile (the cache has not seen it yet); nothing to do.
      if (!(err instanceof KubeApiError && err.statusCode === 409))
        this.o.log.warn(
          { err: String(err), gatewayClass: name },
          'could not create the GatewayClass; trying again later',
        );
    }
  }
}

export const kubeGatewayClassCreate =
  (kc: KubeConfig) =>
  (body: object): Promise<void> =>
    postJson(kc, '/apis/gateway.networking.k8s.io/v1/gatewayclasses', body);
