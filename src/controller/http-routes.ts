/**
 * What the controller serves on its HTTP port beside /metrics, /healthz and /readyz: the state
 * document (GET /api/v1/state), the same seen from the nodes (GET /api/v1/nodes) and the dashboard.
 */
import { byNode } from '../views/by-node.ts';
import { DASHBOARD_HTML } from './dashboard.ts';
import type { StateTracker } from './state.ts';

export function controllerRoutes(state: StateTracker): {
  json: Record<string, () => unknown>;
  html: Record<string, string>;
} {
  return {
    json: {
      '/api/v1/state': () => state.document(),
      '/api/v1/nodes': () => {
        const doc = state.document();
        return {
          clusterName: doc.clusterName,
          adapter: doc.adapter,
          generatedAt: doc.generatedAt,
          leadership: doc.leadership,
          lastSync: doc.lastSync,
          nodes: byNode(doc),
        };
      },
    },
    html: { '/': DASHBOARD_HTML },
  };
}
