/**
 * `npl-lb migrate ... --check`: the values a migration produced, held against a running cluster's
 * objects before anything is installed. It says which objects would change hands (npl-lb would serve
 * what the old controller serves now, so its address would move), which npl-lb would serve that no
 * one serves now, what the chart would collide with (an IngressClass of the same name, a second
 * default class), and whether a NodePortLocal agent would be missing or doubled. Pure: the objects
 * come in as read (zod-checked here, as everything from the API is).
 */
import { z } from 'zod';

const meta = z.object({
  name: z.string(),
  namespace: z.string().optional(),
  annotations: z.record(z.string(), z.string()).nullish(),
});
const lbIngress = z.array(z.object({ ip: z.string().optional(), hostname: z.string().optional() }).loose());

/** A Service's or an Ingress's `status.loadBalancer`: where someone serves it now. */
const lbStatus = z
  .object({ loadBalancer: z.object({ ingress: lbIngress.nullish() }).loose().nullish() })
  .loose()
  .nullish();

export const serviceSchema = z.object({
  metadata: meta,
  spec: z
    .object({ type: z.string().optional(), loadBalancerClass: z.string().nullish() })
    .loose()
    .default({}),
  status: lbStatus,
});
export const ingressSchema = z.object({
  metadata: meta,
  spec: z.object({ ingressClassName: z.string().nullish() }).loose().default({}),
  status: lbStatus,
});
export const ingressClassSchema = z.object({
  metadata: meta,
  spec: z.object({ controller: z.string().optional() }).loose().default({}),
});
export const podSchema = z.object({ metadata: meta });

export interface ClusterObjects {
  services: z.infer<typeof serviceSchema>[];
  ingresses: z.infer<typeof ingressSchema>[];
  ingressClasses: z.infer<typeof ingressClassSchema>[];
  pods: z.infer<typeof podSchema>[];
}

export type FindingKind = 'changes hands' | 'newly served' | 'conflict' | 'stays';

export interface Finding {
  kind: FindingKind;
  object: string;
  why: string;
}

const DEFAULT_CLASS = 'ingressclass.kubernetes.io/is-default-class';
const NPL_ANNOTATION = 'nodeportlocal.antrea.io';
const OUR_CONTROLLER = 'npl-lb.io/ingress-controller';

/** The settings of the values the check needs, the chart's defaults where the values say nothing. */
const effectiveSchema = z.object({
  loadBalancerClass: z.string().catch('npl-lb.io/lb').default('npl-lb.io/lb'),
  defaultLoadBalancer: z.boolean().catch(false).default(false),
  ingressClass: z
    .object({
      name: z.string().catch('npl-lb').default('npl-lb'),
      default: z.boolean().catch(false).default(false),
      create: z.boolean().catch(true).default(true),
    })
    .catch({ name: 'npl-lb', default: false, create: true })
    .default({ name: 'npl-lb', default: false, create: true }),
  agent: z
    .object({ enabled: z.boolean().catch(true).default(true) })
    .catch({ enabled: true })
    .default({ enabled: true }),
  namespaces: z
    .object({
      include: z.array(z.string()).catch([]).default([]),
      exclude: z.array(z.string()).catch([]).default([]),
    })
    .catch({ include: [], exclude: [] })
    .default({ include: [], exclude: [] }),
});

const addressOf = (ingress: z.infer<typeof lbIngress> | null | undefined): string =>
  (ingress ?? [])
    .map((i) => i.ip ?? i.hostname ?? '')
    .filter(Boolean)
    .join(', ');

type Effective = z.infer<typeof effectiveSchema>;

/** What each part of the check is given: the settings, the old controller's name, where to say. */
interface CheckContext {
  v: Effective;
  from: string;
  watched: (ns: string | undefined) => boolean;
  say: (kind: FindingKind, object: string, why: string) => void;
}

export function checkMigration(
  values: Record<string, unknown>,
  cluster: ClusterObjects,
  from: string,
): Finding[] {
  const v = effectiveSchema.parse(values);
  const out: Finding[] = [];
  const ctx: CheckContext = {
    v,
    from,
    watched: (ns) =>
      (v.namespaces.include.length === 0 || v.namespaces.include.includes(ns ?? '')) &&
      !v.namespaces.exclude.includes(ns ?? ''),
    say: (kind, object, why) => out.push({ kind, object, why }),
  };
  serviceFindings(cluster.services, ctx);
  ingressFindings(cluster, ctx);
  agentFindings(cluster.pods, ctx);
  return out;
}

/** LoadBalancer Services: of npl-lb's class, or without one where defaultLoadBalancer says so. */
function serviceFindings(
  services: ClusterObjects['services'],
  { v, from, watched, say }: CheckContext,
): void {
  for (const s of services) {
    if (s.spec.type !== 'LoadBalancer' || !watched(s.metadata.namespace)) continue;
    const name = `Service ${s.metadata.namespace ?? ''}/${s.metadata.name}`;
    const cls = s.spec.loadBalancerClass ?? undefined;
    const ours = cls === v.loadBalancerClass || (cls === undefined && v.defaultLoadBalancer);
    const address = addressOf(s.status?.loadBalancer?.ingress);
    if (!ours) say('stays', name, cls ? `class ${cls}` : 'no class (defaultLoadBalancer: false)');
    else if (address)
      say(
        'changes hands',
        name,
        `npl-lb would serve it (${cls ? `class ${cls}` : 'no class, defaultLoadBalancer: true'}); ${from} serves it at ${address} now: both would serve it and its address would move to a VIP of npl-lb's`,
      );
    else
      say(
        'newly served',
        name,
        `npl-lb would serve it (${cls ? `class ${cls}` : 'no class'}); no one serves it now`,
      );
  }
}

/** Ingresses by class (name, annotation, the default), and what the chart's IngressClass would meet. */
function ingressFindings(cluster: ClusterObjects, { v, from, watched, say }: CheckContext): void {
  const defaults = cluster.ingressClasses.filter((c) => c.metadata.annotations?.[DEFAULT_CLASS] === 'true');
  for (const i of cluster.ingresses) {
    if (!watched(i.metadata.namespace)) continue;
    const name = `Ingress ${i.metadata.namespace ?? ''}/${i.metadata.name}`;
    const cls =
      i.spec.ingressClassName ?? i.metadata.annotations?.['kubernetes.io/ingress.class'] ?? undefined;
    const effective = cls ?? (v.ingressClass.default ? v.ingressClass.name : defaults[0]?.metadata.name);
    const address = addressOf(i.status?.loadBalancer?.ingress);
    if (effective !== v.ingressClass.name) say('stays', name, cls ? `class ${cls}` : 'no class');
    else if (address)
      say(
        'changes hands',
        name,
        `npl-lb would serve it (class ${v.ingressClass.name}${cls ? '' : ', the default'}); ${from} serves it at ${address} now: its address would move`,
      );
    else
      say('newly served', name, `npl-lb would serve it (class ${v.ingressClass.name}); no one serves it now`);
  }
  const same = cluster.ingressClasses.find((c) => c.metadata.name === v.ingressClass.name);
  if (v.ingressClass.create && same && same.spec.controller !== OUR_CONTROLLER)
    say(
      'conflict',
      `IngressClass ${v.ingressClass.name}`,
      `exists with controller ${same.spec.controller ?? '(none)'}: the chart's IngressClass of that name would fail to install or take it over; set ingressClass.name to a name of npl-lb's own`,
    );
  const otherDefault = defaults.find((c) => c.metadata.name !== v.ingressClass.name);
  if (v.ingressClass.default && otherDefault)
    say(
      'conflict',
      `IngressClass ${otherDefault.metadata.name}`,
      `is the default class already: with ingressClass.default: true there would be two, and the API server refuses an Ingress without a class`,
    );
}

/** A NodePortLocal agent doubled (Pods annotated already) or missing (npl-lb's off, none annotated). */
function agentFindings(pods: ClusterObjects['pods'], { v, say }: CheckContext): void {
  const annotated = pods.filter((p) => p.metadata.annotations?.[NPL_ANNOTATION] !== undefined).length;
  if (v.agent.enabled && annotated > 0)
    say(
      'conflict',
      'agent.enabled: true',
      `${annotated} Pod(s) carry a NodePortLocal annotation already (Antrea's NodePortLocal runs here): a second agent would fight it for the node ports; set agent.enabled: false`,
    );
  if (!v.agent.enabled && annotated === 0)
    say(
      'conflict',
      'agent.enabled: false',
      "no Pod carries a NodePortLocal annotation: with npl-lb's agent off, nothing would give its pools members (is Antrea's NodePortLocal on?)",
    );
}

/** The report printed, and whether anything would change hands or collide (exit code 1). */
export function renderCheck(
  findings: readonly Finding[],
  source: string,
  context: string,
): { text: string; clean: boolean } {
  const section = (kind: FindingKind, title: string) => {
    const rows = findings.filter((f) => f.kind === kind);
    return rows.length === 0
      ? []
      : [`${title} (${rows.length}):`, ...rows.map((f) => `  ${f.object}: ${f.why}`), ''];
  };
  const lines = [
    `# npl-lb migrate --check: the values from ${source}, held against the cluster of context ${context}`,
    '',
    ...section('conflict', 'Would collide'),
    ...section(
      'changes hands',
      'Would change hands (served now by the old controller, npl-lb would serve them too)',
    ),
    ...section('newly served', 'Would be served by npl-lb (no one serves them now)'),
    ...section('stays', 'Stay where they are'),
  ];
  const clean = !findings.some((f) => f.kind === 'conflict' || f.kind === 'changes hands');
  lines.push(
    clean
      ? 'Nothing would change hands or collide: the values are safe to install beside the old controller.'
      : 'Something would change hands or collide (above): change the values, or move those objects on purpose.',
  );
  return { text: `${lines.join('\n')}\n`, clean };
}
