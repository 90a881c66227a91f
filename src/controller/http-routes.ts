/**
 * What the controller serves on its HTTP port beside /metrics, /healthz and /readyz: the state
 * document (GET /api/v1/state), the same seen from the nodes (GET /api/v1/nodes), the dashboard's
 * document (GET /api/v1/dashboard) and its live stream (GET /api/v1/dashboard/events), a health
 * read on demand (POST /api/v1/health/refresh) and the dashboard itself.
 */
import { byPool } from '../views/by-pool.ts';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { byNode } from '../views/by-node.ts';
import { impact } from '../views/impact.ts';
import { virtualServices } from '../views/virtual-services.ts';
import { DASHBOARD_HTML } from './dashboard.ts';
import { DashboardStream, type StreamOptions } from './dashboard-stream.ts';
import type { HealthMonitor } from './health-monitor.ts';
import type { StateDocument, StateTracker } from './state.ts';

export type RawHandler = (req: IncomingMessage, res: ServerResponse) => void;

/** The state seen from the nodes (GET /api/v1/nodes). */
function nodesDocument(doc: StateDocument) {
  return {
    clusterName: doc.clusterName,
    adapter: doc.adapter,
    generatedAt: doc.generatedAt,
    leadership: doc.leadership,
    lastSync: doc.lastSync,
    nodes: byNode(doc),
  };
}

/** What the dashboard shows: the nodes' view, health, virtual services and impact. */
export function dashboardDocument(state: StateTracker) {
  const doc = state.document();
  return {
    ...nodesDocument(doc),
    health: doc.health,
    virtualServices: virtualServices(doc),
    impact: impact(doc),
    pools: byPool(doc),
  };
}

export function controllerRoutes(
  state: StateTracker,
  health?: HealthMonitor,
  stream: StreamOptions = {},
): {
  json: Record<string, () => unknown>;
  html: Record<string, string>;
  handlers: Record<string, RawHandler>;
} {
  const events = new DashboardStream(
    () => dashboardDocument(state),
    (fn) => state.onChange(fn),
    stream,
  );
  return {
    json: {
      '/api/v1/state': () => state.document(),
      '/api/v1/nodes': () => nodesDocument(state.document()),
      '/api/v1/dashboard': () => dashboardDocument(state),
    },
    html: { '/': DASHBOARD_HTML },
    handlers: {
      '/api/v1/dashboard/events': (req, res) => events.handle(req, res),
      '/api/v1/health/refresh': (req, res) => {
        if (req.method !== 'POST') {
          res.writeHead(405, { Allow: 'POST' }).end('POST only\n');
          return;
        }
        if (!health?.supported) {
          res.writeHead(501, { 'Content-Type': 'application/json' });
          res.end(JSON.stringify({ error: 'this load balancer adapter does not report health' }));
          return;
        }
        void health.refresh().then(() => {
          res.writeHead(200, { 'Content-Type': 'application/json' });
          res.end(JSON.stringify(state.document().health));
        });
      },
    },
  };
}
