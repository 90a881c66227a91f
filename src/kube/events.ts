/**
 * Kubernetes Events on the objects npl-lb acts for (core/v1, which `kubectl describe` shows).
 * The same event for the same object is written at most once per interval.
 */
import type { KubeConfig } from '@kubernetes/client-node';
import { postJson } from './raw-client.ts';
import { errorMessage } from '../runtime/errors.ts';
import { type Logger, silentLogger } from '../runtime/logger.ts';

export interface EventTarget {
  kind: string;
  apiVersion: string;
  namespace: string;
  name: string;
  uid: string;
}

export type EventType = 'Normal' | 'Warning';

export interface EventSink {
  record(target: EventTarget, type: EventType, reason: string, message: string): Promise<void>;
}

export class EventRecorder implements EventSink {
  private readonly recent = new Map<string, number>();
  private readonly log: Logger;

  constructor(
    private readonly kc: KubeConfig,
    private readonly component: string,
    private readonly host: string,
    opts: { logger?: Logger; dedupeMs?: number; now?: () => number } = {},
  ) {
    this.log = opts.logger ?? silentLogger();
    this.dedupeMs = opts.dedupeMs ?? 5 * 60_000;
    this.now = opts.now ?? Date.now;
  }

  private readonly dedupeMs: number;
  private readonly now: () => number;

  /** Events remembered for their dedupe interval (for tests). */
  get remembered(): number {
    return this.recent.size;
  }

  async record(target: EventTarget, type: EventType, reason: string, message: string): Promise<void> {
    const key = `${target.uid}|${reason}|${message}`;
    const last = this.recent.get(key);
    const t = this.now();
    if (last !== undefined && t - last < this.dedupeMs) return;
    // Kept in the order they were written (a key written again goes last), so what can no longer
    // suppress anything is at the front: forgotten from there, up to the first that still can. Each
    // key is forgotten once, so an Event costs the same however many objects the cluster has (a
    // walk of every key on each Event, once there were more than 1,024, grew with the cluster).
    this.recent.delete(key);
    this.recent.set(key, t);
    for (const [k, at] of this.recent) {
      if (t - at < this.dedupeMs) break;
      this.recent.delete(k);
    }
    const ts = new Date(t);
    try {
      // Events about cluster-scoped objects (Nodes) live in the default namespace, as kubelet's do.
      const namespace = target.namespace || 'default';
      await postJson(this.kc, `/api/v1/namespaces/${encodeURIComponent(namespace)}/events`, {
        apiVersion: 'v1',
        kind: 'Event',
        metadata: {
          name: `${target.name}.${t.toString(16)}${Math.floor(Math.random() * 0xfff).toString(16)}`,
          namespace,
        },
        involvedObject: {
          kind: target.kind,
          apiVersion: target.apiVersion,
          namespace: target.namespace,
          name: target.name,
          uid: target.uid,
        },
        type,
        reason,
        message,
        source: { component: this.component, host: this.host },
        reportingComponent: this.component,
        reportingInstance: this.host,
        firstTimestamp: ts.toISOString(),
        lastTimestamp: ts.toISOString(),
        count: 1,
      });
    } catch (err) {
      this.log.warn({ err: errorMessage(err), reason }, 'could not record event');
    }
  }
}
