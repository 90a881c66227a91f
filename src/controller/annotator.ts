/**
 * Auto-annotation (NodePortLocal mode): our LoadBalancer Services and every backend Service of our
 * Ingresses get `nodeportlocal.antrea.io/enabled: "true"`, with a marker saying npl-lb added it; the
 * annotation is removed only where the marker says it is ours, so a person's annotation stays.
 */
import type { KubeConfig } from '@kubernetes/client-node';
import type { ControllerConfig } from '../config/controller-config.ts';
import { NPL_ENABLED_ANNOTATION, NPL_MANAGED_ANNOTATION } from '../kube/annotations.ts';
import type { Service } from '../kube/objects.ts';
import { collectionPath, RESOURCES } from '../kube/paths.ts';
import { KubeApiError, mergePatch } from '../kube/raw-client.ts';
import { ingressBackendServices, wantsAnnotation } from '../source/annotated-services.ts';
import type { ClusterView } from '../source/desired.ts';
import { routeInputs } from '../source/view.ts';

export type AnnotationAction = 'add' | 'remove' | 'none';

/** What to do with one Service's NPL annotation. Pure. */
export function annotationAction(svc: Service, wanted: boolean): AnnotationAction {
  const eligible = svc.spec.type === 'ClusterIP' || svc.spec.type === 'LoadBalancer';
  const has = svc.metadata.annotations[NPL_ENABLED_ANNOTATION] === 'true';
  const ours = svc.metadata.annotations[NPL_MANAGED_ANNOTATION] === 'true';
  if (wanted && eligible && !has) return 'add';
  if ((!wanted || !eligible) && ours) return 'remove';
  return 'none';
}

export class Annotator {
  /**
   * The backends of our Ingresses, for one version of the Ingress and IngressClass lists (the
   * cache hands out the same lists while a kind is unchanged). A Service's own answer needs only
   * the Service: a cold start of N Services, each of whose status writes changes the Services
   * list, costs N, not N² (it was quadratic).
   */
  private memo: { inputs: unknown[]; backends: Set<string> } | undefined;
  /** How often the backends were computed (for tests). */
  readonly stats = { computed: 0 };

  constructor(
    private readonly kc: KubeConfig,
    private readonly cfg: ControllerConfig,
  ) {}

  private backends(view: ClusterView): Set<string> {
    const inputs = routeInputs(view);
    if (!this.memo || !inputs.every((x, i) => x === this.memo!.inputs[i])) {
      this.stats.computed++;
      this.memo = { inputs, backends: ingressBackendServices(view, this.cfg) };
    }
    return this.memo.backends;
  }

  /** Brings one Service's annotation in line; returns what it did. */
  async reconcile(view: ClusterView, key: string): Promise<AnnotationAction> {
    const svc =
      view.serviceByKey?.(key) ??
      view.services.find((s) => `${s.metadata.namespace}/${s.metadata.name}` === key);
    if (!svc) return 'none';
    const action = annotationAction(svc, wantsAnnotation(svc, this.backends(view), this.cfg));
    if (action === 'none') return action;
    const value = action === 'add' ? 'true' : null;
    const path = `${collectionPath(RESOURCES.services, svc.metadata.namespace)}/${encodeURIComponent(svc.metadata.name)}`;
    try {
      await mergePatch(this.kc, path, {
        metadata: { annotations: { [NPL_ENABLED_ANNOTATION]: value, [NPL_MANAGED_ANNOTATION]: value } },
      });
    } catch (err) {
      if (err instanceof KubeApiError && err.statusCode === 404) return 'none';
      throw err;
    }
    return action;
  }
}
