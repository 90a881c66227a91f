/**
 * The controller's Prometheus metrics, on a registry of its own.
 */
import { Counter, Histogram, Registry } from 'prom-client';

export class ControllerMetrics {
  readonly registry = new Registry();
  readonly reconcileSeconds = new Histogram({
    name: 'npl_lb_controller_reconcile_duration_seconds',
    help: 'Duration of reconciles, by kind (lb: the load-balancer pass; service: one auto-annotation)',
    labelNames: ['kind'],
    buckets: [0.005, 0.01, 0.05, 0.1, 0.5, 1, 5],
    registers: [this.registry],
  });
  readonly reconcileErrors = new Counter({
    name: 'npl_lb_controller_reconcile_errors_total',
    help: 'Reconciles that failed and were retried',
    labelNames: ['kind'],
    registers: [this.registry],
  });
}
