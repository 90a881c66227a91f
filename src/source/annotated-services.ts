/**
 * The Services npl-lb annotates for NodePortLocal: our LoadBalancer Services and the backends of
 * the Ingresses of our classes. Depends on Services, Ingresses and classes only. Pure.
 */
import type { ControllerConfig } from '../config/controller-config.ts';
import type { Ingress, IngressBackend, Service } from '../kube/objects.ts';
import { type ClusterView, ingressClassOf, ourIngressClasses, ourLoadBalancer } from './desired.ts';

const key = (m: { namespace: string; name: string }): string => `${m.namespace}/${m.name}`;

/** Every backend of an Ingress: (service name, port by number or name), default backend included. */
export function ingressBackends(ing: Ingress): { service: string; port: number | string | undefined }[] {
  const out: { service: string; port: number | string | undefined }[] = [];
  const add = (b: IngressBackend | undefined) => {
    if (b?.service) out.push({ service: b.service.name, port: b.service.port.number ?? b.service.port.name });
  };
  add(ing.spec.defaultBackend);
  for (const r of ing.spec.rules) for (const p of r.http?.paths ?? []) add(p.backend);
  return out;
}

/** The Services (namespace/name) that back an Ingress of ours; depends on Ingresses and classes only. */
export function ingressBackendServices(
  view: Pick<ClusterView, 'ingresses' | 'ingressClasses'>,
  cfg: ControllerConfig,
): Set<string> {
  const out = new Set<string>();
  const ours = ourIngressClasses(view.ingressClasses, cfg);
  for (const ing of view.ingresses) {
    if (!ingressClassOf(ing, ours, cfg)) continue;
    for (const b of ingressBackends(ing)) out.add(`${ing.metadata.namespace}/${b.service}`);
  }
  return out;
}

/** Whether npl-lb annotates this Service, given the backends of our Ingresses. */
export function wantsAnnotation(svc: Service, backends: Set<string>, cfg: ControllerConfig): boolean {
  if (cfg.serviceType !== 'NodePortLocal' || !cfg.autoAnnotate) return false;
  return ourLoadBalancer(svc, cfg) || backends.has(key(svc.metadata));
}

/** Services npl-lb annotates for NodePortLocal: our LoadBalancer Services and the backends of our Ingresses. */
export function servicesToAnnotate(view: ClusterView, cfg: ControllerConfig): Set<string> {
  const out = new Set<string>();
  if (cfg.serviceType !== 'NodePortLocal' || !cfg.autoAnnotate) return out;
  for (const s of view.services) if (ourLoadBalancer(s, cfg)) out.add(key(s.metadata));
  for (const b of ingressBackendServices(view, cfg)) out.add(b);
  return out;
}
