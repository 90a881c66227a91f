/**
 * Writes the `nodeportlocal.antrea.io` annotation of the agent's Pods, off the reconcile worker:
 * a Pod's publish waits for its rules (the caller's `publish`), runs detached so the worker moves
 * on and the rules of a burst batch, and a Pod's next reconcile waits for its last publish. A
 * failed publish asks for a reconcile, and that one publishes in the worker, so the work queue's
 * backoff applies.
 */
import type { KubeConfig } from '@kubernetes/client-node';
import {
  NPL_POD_ANNOTATION,
  type NplEntry,
  parseNplAnnotation,
  sameNplEntries,
  serializeNplAnnotation,
} from '../kube/annotations.ts';
import type { Pod } from '../kube/objects.ts';
import { collectionPath, RESOURCES } from '../kube/paths.ts';
import { KubeApiError, mergePatch } from '../kube/raw-client.ts';
import { ErrorCodes, errorMessage, NplError } from '../runtime/errors.ts';
import type { Logger } from '../runtime/logger.ts';
import type { AgentMetrics } from './metrics.ts';

export class AnnotationPublisher {
  /** Publishes in flight, by Pod. */
  private readonly inflight = new Map<string, Promise<void>>();
  /** Pods whose last publish failed: the next one runs in the worker. */
  private readonly inline = new Set<string>();

  constructor(
    private readonly opts: {
      kubeConfig: KubeConfig;
      metrics: AgentMetrics;
      log: Logger;
      /** Asks for the Pod's reconcile again (after a failed publish). */
      retry: (key: string) => void;
    },
  ) {}

  /** The Pod's publish still in flight, if any: its next reconcile waits for it. */
  pending(key: string): Promise<void> | undefined {
    return this.inflight.get(key);
  }

  /**
   * Publishes for a Pod: in the worker (awaited, failures thrown) when the last one failed, else
   * detached when `needed`.
   */
  async run(key: string, needed: boolean, publish: () => Promise<void>): Promise<void> {
    if (this.inline.delete(key)) return publish();
    if (!needed) return;
    const p = publish()
      .catch((err: unknown) => {
        this.opts.log.warn({ pod: key, err: errorMessage(err) }, 'publishing the mapping failed; retrying');
        this.inline.add(key);
        this.opts.retry(key);
      })
      .finally(() => {
        if (this.inflight.get(key) === p) this.inflight.delete(key);
      });
    this.inflight.set(key, p);
  }

  /** Writes the annotation when it differs from the mappings. */
  async write(pod: Pod, want: NplEntry[]): Promise<void> {
    const text = pod.metadata.annotations[NPL_POD_ANNOTATION];
    const have = parseNplAnnotation(text);
    if (have.ok && have.invalid.length === 0 && sameNplEntries(have.entries, want)) return;
    if (text === undefined && want.length === 0) return;
    const value = want.length > 0 ? serializeNplAnnotation(want) : null;
    try {
      const path = `${collectionPath(RESOURCES.pods, pod.metadata.namespace)}/${encodeURIComponent(pod.metadata.name)}/status`;
      await mergePatch(this.opts.kubeConfig, path, {
        metadata: { annotations: { [NPL_POD_ANNOTATION]: value } },
      });
    } catch (err) {
      if (err instanceof KubeApiError && err.statusCode === 404) return;
      this.opts.metrics.annotationPatchErrors.inc();
      throw new NplError(
        ErrorCodes.ANNOTATION_PATCH_FAILED,
        `patching ${NPL_POD_ANNOTATION} on ${pod.metadata.namespace}/${pod.metadata.name}: ${errorMessage(err)}`,
        { cause: err },
      );
    }
  }

  /** Resolves when every publish started so far has finished (tests, stop). */
  async idle(): Promise<void> {
    while (this.inflight.size > 0) await Promise.all([...this.inflight.values()]);
  }
}
