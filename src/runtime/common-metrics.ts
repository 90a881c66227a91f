/**
 * Metrics every npl-lb process serves beside its own: `npl_lb_build_info` (the version, as
 * Kubernetes components' build_info) and the default process metrics (CPU, memory, file
 * descriptors, event loop lag), on the component's registry.
 */
import { collectDefaultMetrics, Gauge, type Registry } from 'prom-client';
import { version } from './version.ts';

export function registerCommonMetrics(registry: Registry, component: 'agent' | 'controller'): void {
  const info = new Gauge({
    name: 'npl_lb_build_info',
    help: 'Always 1; the labels say which npl-lb runs',
    labelNames: ['version', 'component', 'nodejs'],
    registers: [registry],
  });
  info.set({ version: version(), component, nodejs: process.version }, 1);
  collectDefaultMetrics({ register: registry });
}
