/**
 * Readiness gate injection (the mutating admission webhook's decision, pure): a Pod created in a
 * namespace that opted in (the webhook configuration's namespaceSelector on
 * `npl-lb.io/readiness-gate-injection: enabled`, as the AWS controller's
 * `elbv2.k8s.aws/pod-readiness-gate-inject`) gets the gate `npl-lb.io/load-balancer-ready` added to
 * `spec.readinessGates` when a Service npl-lb load-balances selects it. The answer always allows
 * the Pod: the webhook never blocks a Pod (a JSONPatch or nothing).
 */
import { z } from 'zod';
import { NPL_ENABLED_ANNOTATION } from '../kube/annotations.ts';
import type { Service } from '../kube/objects.ts';
import { LB_READY_GATE, selectorMatches } from '../kube/pod-ports.ts';

/** The namespace label that opts in. */
export const INJECTION_LABEL = 'npl-lb.io/readiness-gate-injection';

/** The part of an AdmissionReview v1 request the webhook reads (the rest is passed through). */
export const admissionReviewSchema = z.object({
  apiVersion: z.literal('admission.k8s.io/v1'),
  kind: z.literal('AdmissionReview'),
  request: z
    .object({
      uid: z.string().min(1),
      kind: z.object({ group: z.string(), version: z.string(), kind: z.string() }).loose(),
      operation: z.string(),
      namespace: z.string().default(''),
      object: z
        .object({
          metadata: z
            .object({ labels: z.record(z.string(), z.string()).default({}) })
            .loose()
            .default({ labels: {} }),
          spec: z
            .object({ readinessGates: z.array(z.object({ conditionType: z.string() }).loose()).optional() })
            .loose()
            .default({}),
        })
        .loose()
        .optional(),
    })
    .loose(),
});
export type AdmissionReview = z.infer<typeof admissionReviewSchema>;

export interface AdmissionResponse {
  apiVersion: 'admission.k8s.io/v1';
  kind: 'AdmissionReview';
  response: {
    uid: string;
    allowed: true;
    patchType?: 'JSONPatch';
    patch?: string;
    warnings?: string[];
  };
}

/** Whether npl-lb load-balances the Service (NPL-enabled, or a LoadBalancer Service it serves). */
export type LoadBalanced = (svc: Service) => boolean;

/** The JSONPatch operations that add the gate, or none. */
export function gatePatch(
  review: AdmissionReview,
  services: readonly Service[],
  loadBalanced: LoadBalanced,
): object[] {
  const r = review.request;
  if (r.operation !== 'CREATE' || r.kind.kind !== 'Pod' || r.kind.group !== '' || !r.object) return [];
  const pod = r.object;
  const gates = pod.spec.readinessGates;
  if (gates?.some((g) => g.conditionType === LB_READY_GATE)) return [];
  const selected = services.some(
    (s) =>
      (s.metadata.annotations[NPL_ENABLED_ANNOTATION] === 'true' || loadBalanced(s)) &&
      selectorMatches(s.spec.selector, pod.metadata.labels),
  );
  if (!selected) return [];
  const gate = { conditionType: LB_READY_GATE };
  return gates === undefined
    ? [{ op: 'add', path: '/spec/readinessGates', value: [gate] }]
    : [{ op: 'add', path: '/spec/readinessGates/-', value: gate }];
}

/** The answer to a review: allowed, with the gate's patch where one applies. */
export function admissionResponse(review: AdmissionReview, ops: object[]): AdmissionResponse {
  const response: AdmissionResponse['response'] = { uid: review.request.uid, allowed: true };
  if (ops.length > 0) {
    response.patchType = 'JSONPatch';
    response.patch = Buffer.from(JSON.stringify(ops)).toString('base64');
  }
  return { apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', response };
}
