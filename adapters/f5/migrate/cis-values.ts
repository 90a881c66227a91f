/**
 * CIS's settings from a file: the values of its Helm chart (f5-bigip-ctlr 2.x: `args:` with `_` for
 * `-`, and the chart's own keys around them) or a Deployment (the container's `args`). The chart
 * renders `args.namespaces` as one `--namespace` each and `ingressClass.ingressClassName` as
 * `--ingress-class`, so the flags read here are the ones CIS runs with; every other key of the
 * chart is carried or named in a note. Pure.
 */
import { z } from 'zod';
import { migrateCis } from './cis.ts';
import { type Migration, type MigrationNote, put, refusePlaceholders } from '../../../src/migrate/result.ts';

const OWN_POD =
  "the npl-lb chart sets its own Pods' image, RBAC, ServiceAccount, security context and resources";
const NEXT =
  'CIS for BIG-IP Next (Central Manager) is not supported: point adapter.f5.url at a BIG-IP with AS3';

/** What each chart key (other than `args`) becomes. */
const CHART_KEYS: Record<string, (v: unknown, out: Migration) => void> = {
  bigip_login_secret: (v, out) =>
    say(
      out,
      'by hand',
      `CIS reads the BIG-IP login from Secret ${String(v)} in its own namespace: copy it (keys username and password) into npl-lb's namespace and name it in credentials.existingSecret`,
    ),
  bigip_secret: (v, out) => {
    const s = z
      .looseObject({
        create: z.unknown().optional(),
        username: z.string().optional().catch(undefined),
        password: z.unknown().optional(),
      })
      .catch({ create: undefined, username: undefined, password: undefined })
      .parse(v);
    if (s.create === true || s.create === 'true')
      say(
        out,
        'no equivalent',
        'the npl-lb chart creates its credentials Secret from credentials.username and credentials.password',
      );
    if (s.username) put(out.values, 'credentials.username', s.username);
    if (s.password)
      say(
        out,
        'by hand',
        'not printed (a secret): give it with --set credentials.password=... or a Secret named in credentials.existingSecret',
      );
  },
  ingressClass: (v, out) => {
    const c = z
      .looseObject({ isDefaultIngressController: z.unknown().optional() })
      .catch({ isDefaultIngressController: undefined })
      .parse(v);
    if (c.isDefaultIngressController === true || c.isDefaultIngressController === 'true')
      say(
        out,
        'by hand',
        "CIS's class is the default IngressClass: npl-lb does not take it beside a running CIS; set ingressClass.default: true once CIS is gone",
      );
    else say(out, 'no equivalent', 'the npl-lb chart creates its own IngressClass (ingressClass.create)');
  },
  nodeSelector: (v, out) => put(out.values, 'controller.nodeSelector', v),
  tolerations: (v, out) => put(out.values, 'controller.tolerations', v),
  affinity: (v, out) => put(out.values, 'controller.affinity', v),
  limits_cpu: ownPod,
  limits_memory: ownPod,
  requests_cpu: ownPod,
  requests_memory: ownPod,
  rbac: ownPod,
  serviceAccount: ownPod,
  image: ownPod,
  version: ownPod,
  securityContext: ownPod,
  podSecurityContext: ownPod,
  namespace: (_v, out) =>
    say(out, 'no equivalent', 'install npl-lb in a namespace of its own (helm install -n npl-lb-system)'),
  cm_login_secret: (_v, out) => say(out, 'no equivalent', NEXT),
  cm_secret: (_v, out) => say(out, 'no equivalent', NEXT),
  deployConfig: (_v, out) => say(out, 'no equivalent', NEXT),
};

function say(out: Migration, kind: MigrationNote['kind'], why: string): void {
  out.notes.push({ from: '', kind, why });
}

function ownPod(_v: unknown, out: Migration): void {
  say(out, 'no equivalent', OWN_POD);
}

/** The flags CIS's chart renders from `args` (and the class name), as CIS receives them. */
export function chartFlags(values: Record<string, unknown>): string[] {
  const args = values.args as Record<string, unknown>;
  const flags: string[] = [];
  const className = (values.ingressClass as { ingressClassName?: unknown } | undefined)?.ingressClassName;
  if (typeof className === 'string' && className) flags.push(`--ingress-class=${className}`);
  for (const [k, v] of Object.entries(args)) {
    if (v === null || v === undefined) continue;
    if (k === 'namespaces' && Array.isArray(v)) for (const ns of v) flags.push(`--namespace=${String(ns)}`);
    else flags.push(`--${k.replace(/_/g, '-')}=${Array.isArray(v) ? v.join(',') : String(v)}`);
  }
  return flags;
}

const isMapping = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/** A document of a file given to `migrate cis`: the migration, or undefined when it is not CIS's. */
export function migrateCisDocument(doc: unknown): Migration | undefined {
  if (!isMapping(doc)) return undefined;
  if (isMapping(doc.args)) {
    refusePlaceholders(Object.entries(doc).filter(([k]) => k !== 'args'));
    const m = migrateCis(chartFlags(doc));
    for (const [key, v] of Object.entries(doc)) {
      if (key === 'args') continue;
      const before = m.notes.length;
      const rule = CHART_KEYS[key];
      if (rule) rule(v, m);
      else say(m, 'no equivalent', "not a key of CIS's Helm chart npl-lb knows");
      for (const n of m.notes.slice(before)) n.from ||= key;
    }
    return m;
  }
  const spec = (doc as { spec?: { template?: { spec?: { containers?: { args?: unknown }[] } } } }).spec;
  const containerArgs = spec?.template?.spec?.containers?.find((c) => Array.isArray(c.args))?.args;
  return Array.isArray(containerArgs) ? migrateCis(containerArgs.map(String)) : undefined;
}
