/**
 * Which objects are ours: LoadBalancer Services of our classes (loadBalancerClass and the
 * loadBalancerClasses mapped to parameters; or of none, with defaultLoadBalancer) and Ingresses of our IngressClasses, in the namespaces we serve. Pure.
 */
import type { ControllerConfig } from '../config/controller-config.ts';
import { namespaceSelected } from '../config/controller-config.ts';
import { DEFAULT_INGRESS_CLASS_ANNOTATION } from '../kube/annotations.ts';
import type { Ingress, IngressClass, Service } from '../kube/objects.ts';

export function ourLoadBalancer(svc: Service, cfg: ControllerConfig): boolean {
  if (svc.spec.type !== 'LoadBalancer' || !namespaceSelected(cfg, svc.metadata.namespace)) return false;
  const cls = svc.spec.loadBalancerClass;
  if (cls === undefined) return cfg.defaultLoadBalancer;
  return cls === cfg.loadBalancerClass || cfg.loadBalancerClasses.some((c) => c.name === cls);
}

export interface OurClasses {
  names: Set<string>;
  defaultClass: string | undefined;
}

export function ourIngressClasses(classes: IngressClass[], cfg: ControllerConfig): OurClasses {
  const ours = classes.filter((c) => c.spec.controller === cfg.ingressController);
  const def = ours.find((c) => c.metadata.annotations[DEFAULT_INGRESS_CLASS_ANNOTATION] === 'true');
  return { names: new Set(ours.map((c) => c.metadata.name)), defaultClass: def?.metadata.name };
}

/** The IngressClass of ours an Ingress belongs to, if any (no class: the default one, when it is ours). */
export function ingressClassOf(ing: Ingress, ours: OurClasses, cfg: ControllerConfig): string | undefined {
  if (!namespaceSelected(cfg, ing.metadata.namespace)) return undefined;
  const cls = ing.spec.ingressClassName ?? ing.metadata.annotations['kubernetes.io/ingress.class'];
  if (cls !== undefined) return ours.names.has(cls) ? cls : undefined;
  return ours.defaultClass;
}
