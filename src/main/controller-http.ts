/**
 * The controller's HTTP side, as every runner of it serves it (the controller command, the demo,
 * tests): metrics, readiness, the state API, the dashboard and its stream.
 */
import type { NplController } from '../controller/controller.ts';
import type { StreamOptions } from '../controller/dashboard-stream.ts';
import { controllerRoutes } from '../controller/http-routes.ts';
import { serveStatus, type StatusServer } from '../runtime/status-server.ts';

export function serveController(
  controller: NplController,
  address: { host: string; port: number },
  /** Readiness; the controller's own unless told (a standby under leader election differs). */
  ready: () => boolean = () => controller.isReady,
  stream: StreamOptions = {},
): Promise<StatusServer> {
  const routes = controllerRoutes(controller.state, controller.health, stream);
  return serveStatus(address, controller.metrics.registry, ready, routes.json, routes.html, routes.handlers);
}
