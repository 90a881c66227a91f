/**
 * The agent's Prometheus metrics, on a registry of its own (several agents can share a process in tests).
 */
import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import { registerCommonMetrics } from '../runtime/common-metrics.ts';
import type { PortTable } from './port-table.ts';

export class AgentMetrics {
  readonly registry = new Registry();
  readonly portsAllocated: Gauge<'protocol' | 'family'>;
  readonly portsFree: Gauge<'protocol' | 'family'>;
  readonly ruleSyncSeconds: Histogram<'kind'>;
  readonly ruleSyncErrors: Counter<'kind'>;
  readonly annotationPatchErrors: Counter;
  readonly portExhaustion: Counter<'protocol' | 'family'>;
  readonly reconcileErrors: Counter;
  private table: PortTable | undefined;

  constructor() {
    registerCommonMetrics(this.registry, 'agent');
    const registers = [this.registry];
    const counts = () => this.table?.counts() ?? [];
    this.portsAllocated = new Gauge({
      name: 'npl_lb_agent_ports_allocated',
      help: 'Node ports allocated to NodePortLocal mappings',
      labelNames: ['protocol', 'family'],
      registers,
      collect() {
        for (const c of counts()) this.set({ protocol: c.protocol, family: c.family }, c.allocated);
      },
    });
    this.portsFree = new Gauge({
      name: 'npl_lb_agent_ports_free',
      help: 'Node ports still free in the configured range',
      labelNames: ['protocol', 'family'],
      registers,
      collect() {
        for (const c of counts()) this.set({ protocol: c.protocol, family: c.family }, c.free);
      },
    });
    this.ruleSyncSeconds = new Histogram({
      name: 'npl_lb_agent_rule_sync_duration_seconds',
      help: 'Time to program forwarding rules: a full batch sync or one incremental change',
      labelNames: ['kind'],
      buckets: [0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5],
      registers,
    });
    this.ruleSyncErrors = new Counter({
      name: 'npl_lb_agent_rule_sync_errors_total',
      help: 'Failed rule syncs and rule changes',
      labelNames: ['kind'],
      registers,
    });
    this.annotationPatchErrors = new Counter({
      name: 'npl_lb_agent_annotation_patch_errors_total',
      help: 'Failed writes of the nodeportlocal.antrea.io Pod annotation',
      registers,
    });
    this.portExhaustion = new Counter({
      name: 'npl_lb_agent_port_exhaustion_total',
      help: 'Allocations that found no free port in the range',
      labelNames: ['protocol', 'family'],
      registers,
    });
    this.reconcileErrors = new Counter({
      name: 'npl_lb_agent_reconcile_errors_total',
      help: 'Pod reconciles that failed and were retried',
      registers,
    });
  }

  watch(table: PortTable): void {
    this.table = table;
  }

  /** Times an async rule operation into the histogram, counting failures. */
  async timeRules<T>(kind: 'sync' | 'change', fn: () => Promise<T>): Promise<T> {
    const end = this.ruleSyncSeconds.startTimer({ kind });
    try {
      return await fn();
    } catch (err) {
      this.ruleSyncErrors.inc({ kind });
      throw err;
    } finally {
      end();
    }
  }
}
