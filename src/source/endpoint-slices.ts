/**
 * The Pods of a Service without a selector: those its EndpointSlices name (endpoints whose
 * targetRef is a Pod of the Service's namespace). A Service with a selector is served by its
 * selector alone, as before; its slices (the EndpointSlice controller's) are not even listed.
 * Pure: the controller keeps one index up to date from its informer; a pass over plain arrays
 * builds one.
 */
import { type EndpointSlice, type Pod, SERVICE_NAME_LABEL, type Service } from '../kube/objects.ts';
import { podTerminated } from '../kube/pod-ports.ts';
import type { PodSelector } from './members.ts';

const key = (namespace: string, name: string): string => `${namespace}/${name}`;

/** Slices by Service, and the Services whose slices name each Pod. */
export class SliceIndex {
  /** Per slice (namespace/name): its Service and the Pods it names. */
  private readonly slices = new Map<string, { service: string; pods: string[] }>();
  /** Per Service: its slices. */
  private readonly byService = new Map<string, Set<string>>();
  /** Per Pod: how many slices of each Service name it. */
  private readonly byPod = new Map<string, Map<string, number>>();

  constructor(slices: Iterable<EndpointSlice> = []) {
    for (const s of slices) this.put(key(s.metadata.namespace, s.metadata.name), s);
  }

  /** Sets (or, with undefined, removes) one slice; returns the Service keys it touched. */
  put(sliceKey: string, slice: EndpointSlice | undefined): string[] {
    const touched: string[] = [];
    const old = this.slices.get(sliceKey);
    if (old) {
      touched.push(old.service);
      this.slices.delete(sliceKey);
      this.byService.get(old.service)?.delete(sliceKey);
      for (const p of old.pods) {
        const m = this.byPod.get(p)!;
        const n = m.get(old.service)! - 1;
        if (n > 0) m.set(old.service, n);
        else m.delete(old.service);
        if (m.size === 0) this.byPod.delete(p);
      }
    }
    const svcName = slice?.metadata.labels[SERVICE_NAME_LABEL];
    if (!slice || !svcName) return touched;
    const ns = slice.metadata.namespace;
    const service = key(ns, svcName);
    const pods = [
      ...new Set(
        slice.endpoints
          .map((e) => e.targetRef)
          .filter((r) => r && (r.kind ?? 'Pod') === 'Pod' && (r.namespace ?? ns) === ns)
          .map((r) => key(ns, r!.name)),
      ),
    ];
    this.slices.set(sliceKey, { service, pods });
    let set = this.byService.get(service);
    if (!set) this.byService.set(service, (set = new Set()));
    set.add(sliceKey);
    for (const p of pods) {
      let m = this.byPod.get(p);
      if (!m) this.byPod.set(p, (m = new Map()));
      m.set(service, (m.get(service) ?? 0) + 1);
    }
    if (touched[0] !== service) touched.push(service);
    return touched;
  }

  /** The Pods (namespace/name) the slices of a Service name, each once, in a stable order. */
  podsOf(service: string): string[] {
    const out = new Set<string>();
    for (const s of this.byService.get(service) ?? []) for (const p of this.slices.get(s)!.pods) out.add(p);
    return [...out].sort();
  }

  /** Adds to `out` the Services whose slices name this Pod. */
  servicesOf(pod: string, out: Set<string>): void {
    for (const s of this.byPod.get(pod)?.keys() ?? []) out.add(s);
  }

  get size(): number {
    return this.slices.size;
  }
}

/** Whether a Service selects its Pods itself (a selector with at least one label). */
export const hasSelector = (svc: Service): boolean => Object.keys(svc.spec.selector ?? {}).length > 0;

/**
 * `base` for Services with a selector; for the others, the Pods their slices name (those that
 * exist and are not over).
 */
export function withSlices(
  base: PodSelector,
  slices: SliceIndex,
  podByKey: (key: string) => Pod | undefined,
): PodSelector {
  if (slices.size === 0) return base;
  return {
    select: (svc) => {
      if (hasSelector(svc)) return base.select(svc);
      const out: Pod[] = [];
      for (const k of slices.podsOf(key(svc.metadata.namespace, svc.metadata.name))) {
        const p = podByKey(k);
        if (p && !podTerminated(p)) out.push(p);
      }
      return out;
    },
  };
}
