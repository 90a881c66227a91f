/**
 * Which Services serve a host and path, from the Ingresses (and OpenShift Routes) given to the
 * migration with the custom resources: a rule that names a host and a path, npl-lb's
 * BackendPolicy names the Service behind them. Pure.
 */
import { z } from 'zod';
import type { SourceObject, TargetService } from './objects.ts';

const port = z.looseObject({ name: z.string().optional(), number: z.number().optional() }).catch({});
const ingressSpec = z.looseObject({
  rules: z
    .array(
      z.looseObject({
        host: z.string().catch(''),
        http: z
          .looseObject({
            paths: z
              .array(
                z.looseObject({
                  path: z.string().catch('/'),
                  backend: z
                    .looseObject({
                      service: z.looseObject({ name: z.string(), port }).optional(),
                    })
                    .catch({}),
                }),
              )
              .catch([]),
          })
          .catch({ paths: [] }),
      }),
    )
    .catch([]),
});
const routeSpec = z.looseObject({
  host: z.string().catch(''),
  path: z.string().catch('/'),
  to: z.looseObject({ name: z.string() }).optional(),
  alternateBackends: z.array(z.looseObject({ name: z.string() })).catch([]),
});
const serviceSpec = z.looseObject({
  ports: z.array(z.looseObject({ name: z.string().optional(), port: z.number() })).catch([]),
});

interface Backend {
  namespace: string;
  host: string;
  path: string;
  service: string;
  port?: { name?: string; number?: number };
  /** The Ingress the rule is in (a Route's rule has none). */
  ingress?: string;
}

/** A rule's target matches its own path and the paths under it (`/foo` takes `/foo/bar`). */
export const pathUnder = (path: string, target: string): boolean =>
  target === '/' || path === target || path.startsWith(target.endsWith('/') ? target : `${target}/`);

export class Backends {
  private readonly backends: Backend[] = [];
  private readonly servicePorts = new Map<string, { name?: string; port: number }[]>();

  constructor(objects: readonly SourceObject[]) {
    for (const o of objects) {
      const ns = o.metadata.namespace;
      if (o.kind === 'Ingress') {
        for (const rule of ingressSpec.parse(o.spec).rules)
          for (const p of rule.http.paths)
            if (p.backend.service)
              this.backends.push({
                namespace: ns,
                host: rule.host,
                path: p.path || '/',
                service: p.backend.service.name,
                port: p.backend.service.port,
                ingress: o.metadata.name,
              });
      } else if (o.kind === 'Route') {
        const r = routeSpec.parse(o.spec);
        for (const to of [...(r.to ? [r.to] : []), ...r.alternateBackends])
          this.backends.push({ namespace: ns, host: r.host, path: r.path || '/', service: to.name });
      } else if (o.kind === 'Service') {
        this.servicePorts.set(`${ns}/${o.metadata.name}`, serviceSpec.parse(o.spec).ports);
      }
    }
  }

  /** Whether any Ingress or Route was given (a rule that matches none is then worth saying). */
  get size(): number {
    return this.backends.length;
  }

  /** The Ingresses (by name) with a rule for `host` under `target` in `namespace`. */
  ingressesServing(namespace: string, host: string, target: string): string[] {
    const names = new Set<string>();
    for (const b of this.backends)
      if (b.ingress && b.namespace === namespace && b.host === host && pathUnder(b.path, target))
        names.add(b.ingress);
    return [...names];
  }

  /** The Services (and ports, when they can be named) serving `host` under `target` in `namespace`. */
  serving(namespace: string, host: string, target: string): TargetService[] {
    const out = new Map<string, TargetService>();
    for (const b of this.backends) {
      if (b.namespace !== namespace || b.host !== host || !pathUnder(b.path, target)) continue;
      const portName =
        b.port?.name ??
        this.servicePorts.get(`${namespace}/${b.service}`)?.find((p) => p.port === b.port?.number)?.name;
      const t: TargetService = { namespace, service: b.service, ...(portName ? { port: portName } : {}) };
      out.set(`${t.service}/${t.port ?? ''}`, t);
    }
    return [...out.values()];
  }
}
