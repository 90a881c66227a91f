/**
 * One Ingress -> its HTTP routes and default pool, through the validation boundary: a rule whose
 * host or path is refused is skipped, a backend that does not resolve is skipped, and each gives a
 * Warning finding naming the field (`tls:` is read by ingress/tls.ts). Pure.
 */
import { EventReasons } from '../../kube/event-reasons.ts';
import type { Ingress, IngressBackend, Service } from '../../kube/objects.ts';
import type { HttpRoute } from '../../model/types.ts';
import type { Finding } from '../types.ts';
import { hostProblem, pathProblem } from '../validate.ts';

type ServicePort = Service['spec']['ports'][number];

export interface IngressRoutes {
  routes: HttpRoute[];
  defaultPool: string | undefined;
  findings: Finding[];
}

export function ingressRoutes(
  ing: Ingress,
  services: ReadonlyMap<string, Service>,
  poolFor: (svc: Service, port: ServicePort) => string,
  /** The Ingress whose default backend the class already serves, if one came first. */
  defaultTakenBy?: string,
): IngressRoutes {
  const ns = ing.metadata.namespace;
  const ingKey = `${ns}/${ing.metadata.name}`;
  const findings: Finding[] = [];
  const warn = (reason: string, message: string) =>
    findings.push({ kind: 'Ingress', key: ingKey, type: 'Warning', reason, message });

  /** The pool of a backend, or undefined with a finding saying why not. */
  const resolve = (b: IngressBackend, field: string): string | undefined => {
    const ref = b.service;
    if (!ref) {
      warn(EventReasons.UnsupportedBackend, `${field}: only Service backends are served`);
      return undefined;
    }
    const svc = services.get(`${ns}/${ref.name}`);
    if (!svc) {
      warn(EventReasons.BackendNotFound, `${field}: Service ${ns}/${ref.name} not found; rule skipped`);
      return undefined;
    }
    const want = ref.port.number ?? ref.port.name;
    const sp = svc.spec.ports.find((p) => (typeof want === 'number' ? p.port === want : p.name === want));
    if (!sp || sp.protocol !== 'TCP') {
      warn(
        EventReasons.BackendPortNotFound,
        `${field}: Service ${ns}/${ref.name} has no TCP port ${JSON.stringify(want ?? '')}; rule skipped`,
      );
      return undefined;
    }
    return poolFor(svc, sp);
  };

  const routes: HttpRoute[] = [];
  ing.spec.rules.forEach((rule, i) => {
    const host = rule.host ?? '';
    const hp = hostProblem(host);
    if (hp) {
      warn(EventReasons.InvalidIngressRule, `spec.rules[${i}].host: ${hp}; rule skipped`);
      return;
    }
    (rule.http?.paths ?? []).forEach((p, j) => {
      const field = `spec.rules[${i}].http.paths[${j}]`;
      const path = p.path ?? '/';
      const pp = pathProblem(path, p.pathType);
      if (pp) {
        warn(EventReasons.InvalidIngressRule, `${field}.path: ${pp}; rule skipped`);
        return;
      }
      const pool = resolve(p.backend, `${field}.backend`);
      if (pool) routes.push({ host, path, pathType: p.pathType, pool, source: ingKey });
    });
  });
  const db = ing.spec.defaultBackend;
  let defaultPool: string | undefined;
  if (db && defaultTakenBy) {
    warn(
      EventReasons.InvalidIngressRule,
      `spec.defaultBackend: the default backend of this IngressClass comes from ${defaultTakenBy}; ignored`,
    );
  } else if (db) defaultPool = resolve(db, 'spec.defaultBackend');
  return { routes, defaultPool, findings };
}
