/**
 * CIS (k8s-bigip-ctlr) settings as npl-lb values for the BIG-IP (AS3) adapter. CIS takes them as
 * command-line flags (`--bigip-url=...`, `--namespace x` repeated); its Helm chart as `args:` with
 * `_` for `-`; a Deployment as the container's args. All three come here as flags. Every flag CIS
 * knows is carried over or noted with why. Pure.
 */
import { ErrorCodes, NplError } from '../../../src/runtime/errors.ts';
import { CIS_NOTES } from './cis-notes.ts';
import { clusterNameOf, type Migration, put, refusePlaceholders } from '../../../src/migrate/result.ts';

/** Input that is not a CIS setting at all (a placeholder, a name BIG-IP refuses): refused. */
const refuse = (flag: string, v: string, why: string): never => {
  throw new NplError(ErrorCodes.CONFIG_INVALID, `--${flag}=${JSON.stringify(v.slice(0, 80))}: ${why}`);
};

/** The BIG-IP's address: https:// (or http://) and a host; a bare host is taken as https. */
function bigipUrl(v: string): string {
  const url = /^[a-z][a-z0-9+.-]*:\/\//i.test(v) ? v : `https://${v}`;
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return refuse('bigip-url', v, 'not a URL');
  }
  if (u.protocol !== 'https:' && u.protocol !== 'http:') return refuse('bigip-url', v, 'not an http(s) URL');
  if (!u.hostname || /[<>{}]/.test(v)) return refuse('bigip-url', v, 'no host (a placeholder?)');
  return url;
}

/** `--a=b`, `--a b`, `--flag` (true): the flags in order, a repeated one each time. */
export function parseCisArgs(args: readonly string[]): [string, string][] {
  const out: [string, string][] = [];
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    if (!a.startsWith('--')) continue;
    const eq = a.indexOf('=');
    if (eq > 0) out.push([a.slice(2, eq), a.slice(eq + 1)]);
    else if (args[i + 1] !== undefined && !args[i + 1]!.startsWith('--')) out.push([a.slice(2), args[++i]!]);
    else out.push([a.slice(2), 'true']);
  }
  return out;
}

type Rule = (value: string, out: Migration, all: ReadonlyMap<string, string[]>) => void;

const on = (v: string): boolean => v === 'true' || v === '';
const note =
  (kind: Migration['notes'][number]['kind'], why: string, when: (v: string) => boolean = () => true): Rule =>
  (v, out) => {
    if (when(v)) out.notes.push({ from: '', kind, why });
  };

const MEMBER_TYPES: Record<string, string> = {
  nodeportlocal: 'NodePortLocal',
  nodeport: 'NodePort',
  cluster: 'ClusterIP',
};

const RULES: Record<string, Rule> = {
  'bigip-url': (v, out) => put(out.values, 'adapter.f5.url', bigipUrl(v)),
  'bigip-partition': (v, out) => {
    if (!/^[A-Za-z][A-Za-z0-9_.-]{0,63}$/.test(v) || v === 'Common')
      refuse(
        'bigip-partition',
        v,
        'not a BIG-IP partition name (a letter, then letters, digits, "_", "." and "-"; not Common)',
      );
    // The partition names the cluster's objects on the device, as clusterName does in npl-lb.
    const c = clusterNameOf(v);
    put(out.values, 'clusterName', c.name);
    out.notes.push({
      from: '',
      kind: 'changed',
      why: `npl-lb's clusterName (the owner mark on the device) is set from the partition: ${c.name}; change it if another cluster uses that name`,
    });
    // Never CIS's own partition: AS3 declares a tenant whole, and npl-lb would replace what CIS
    // serves there. npl-lb declares its own (the adapter's default, npl_lb_<clusterName>).
    out.notes.push({
      from: '',
      kind: 'changed',
      why: `CIS's partition ${v} stays CIS's: npl-lb declares its own, npl_lb_${c.name.replace(/[^0-9A-Za-z_]/g, '_')} (adapter.f5.tenant left to its default); never give it a partition another controller declares`,
    });
  },
  'bigip-username': (v, out) => {
    if (!v.startsWith('$(')) put(out.values, 'credentials.username', v);
    else
      out.notes.push({
        from: '',
        kind: 'by hand',
        why: 'taken from the environment (a Secret): name that Secret in credentials.existingSecret',
      });
  },
  'bigip-password': note(
    'by hand',
    'not printed (a secret): give it with --set credentials.password=... or a Secret named in credentials.existingSecret',
  ),
  'credentials-directory': note(
    'by hand',
    'npl-lb reads credentials from a Secret: name it in credentials.existingSecret',
  ),
  'pool-member-type': (v, out) => {
    const t = MEMBER_TYPES[v];
    put(out.values, 'serviceType', t ?? 'NodePortLocal');
    // CIS's nodeportlocal members come from Antrea's NodePortLocal, already running: npl-lb reads
    // its annotations, and a second agent would fight it for the node ports.
    if (v === 'nodeportlocal') {
      put(out.values, 'agent.enabled', false);
      out.notes.push({
        from: '',
        kind: 'changed',
        why: "Antrea's NodePortLocal already runs here: npl-lb reads its annotations, its own agent is off (agent.enabled: false)",
      });
    }
    if (!t)
      out.notes.push({
        from: '',
        kind: 'changed',
        why: `${v} has no equivalent: NodePortLocal (members at nodeIP:nodePort, no Pod routes needed) is used`,
      });
  },
  namespace: (_v, out, all) => put(out.values, 'namespaces.include', all.get('namespace') ?? []),
  'namespace-label': note(
    'by hand',
    'npl-lb selects namespaces by name: list the labelled namespaces in namespaces.include',
  ),
  insecure: (v, out) => put(out.values, 'adapter.f5.insecureSkipVerify', on(v)),
  'trusted-certs-cfgmap': note('by hand', "put the BIG-IP's CA (PEM) in adapter.f5.caBundle"),
  'log-level': (v, out) =>
    put(
      out.values,
      'logLevel',
      { DEBUG: 'debug', INFO: 'info', WARNING: 'warn', WARN: 'warn', ERROR: 'error', CRITICAL: 'error' }[
        v.toUpperCase()
      ] ?? 'info',
    ),
  // CIS's class and loadBalancerClass stay CIS's: npl-lb taking the same names would serve (or
  // fight over) what CIS serves. npl-lb keeps its own (npl-lb, npl-lb.io/lb), said.
  'ingress-class': note(
    'changed',
    "CIS's IngressClass stays CIS's: npl-lb serves its own class (ingressClass.name: npl-lb); move an Ingress by setting its spec.ingressClassName",
  ),
  'manage-ingress': (v, out) => {
    if (!on(v)) put(out.values, 'ingressClass.create', false);
  },
  'default-ingress-ip': note(
    'by hand',
    "set this address as the IngressClass's npl-lb.io/vip annotation (kubectl annotate ingressclass ... npl-lb.io/vip=<ip>), inside vip.cidrs",
  ),
  'load-balancer-class': note(
    'changed',
    "CIS's loadBalancerClass stays CIS's: npl-lb serves its own (loadBalancerClass: npl-lb.io/lb); move a Service by creating it again with that class",
  ),
  'manage-load-balancer-class-only': note(
    'changed',
    'beside CIS, npl-lb serves only the LoadBalancer Services of its own class (defaultLoadBalancer: false); set it true once CIS is gone',
    (v) => !on(v),
  ),
  'use-node-internal': (v, out) =>
    put(out.values, 'agent.nodeIpPreference', on(v) ? 'InternalIP' : 'ExternalIP'),
  ipam: note(
    'changed',
    'npl-lb allocates VIPs itself from vip.cidrs (set them); the F5 IPAM controller is not used',
    on,
  ),
  'custom-resource-mode': note(
    'no equivalent',
    'VirtualServer, TransportServer and Policy resources are not read: use Ingress, the Gateway API and BackendPolicy (docs/migrating-from-cis.md)',
    on,
  ),
  'controller-mode': note(
    'no equivalent',
    'npl-lb serves Ingress, LoadBalancer Services and the Gateway API together',
  ),
  'as3-validation': note(
    'no equivalent',
    'npl-lb validates every declaration against the AS3 schema before it is sent',
  ),
  'log-as3-response': note('no equivalent', 'AS3 errors are logged and sent as Events'),
  'disable-teems': note('no equivalent', 'npl-lb sends no telemetry'),
  'http-listen-address': (v, out) => {
    const port = Number(/:(\d+)$/.exec(v)?.[1]);
    if (port) put(out.values, 'controller.httpPort', port);
  },
  'node-label-selector': note(
    'no equivalent',
    'NodePortLocal members are the nodes their Pods run on; exclude nodes with node.kubernetes.io/exclude-from-external-load-balancers',
  ),
  'static-routing-mode': note(
    'no equivalent',
    'members are nodeIP:nodePort: BIG-IP needs no routes to Pod networks',
  ),
  'static-route-node-cidr': note(
    'no equivalent',
    'members are nodeIP:nodePort: BIG-IP needs no routes to Pod networks',
  ),
  'orchestration-cni': note('no equivalent', 'npl-lb works on any CNI; nothing to set'),
  'default-route-domain': note('no equivalent', 'route domains are not set by npl-lb yet'),
  'enable-ipv6': note(
    'changed',
    "npl-lb picks each Service's families from its ipFamilies: add an IPv6 range to vip.cidrs (docs/ipv6.md)",
    on,
  ),
  agent: note('no equivalent', 'npl-lb declares AS3 only', (v) => v !== 'as3'),
  'cm-url': note(
    'no equivalent',
    'BIG-IP Next Central Manager is not supported: point adapter.f5.url at a BIG-IP with AS3',
  ),
  'share-nodes': note('no equivalent', 'nodes are not written to BIG-IP by npl-lb'),
};

export function migrateCis(args: readonly string[]): Migration {
  const flags = parseCisArgs(args);
  const all = new Map<string, string[]>();
  for (const [k, v] of flags) all.set(k, [...(all.get(k) ?? []), v]);
  const out: Migration = { values: { adapter: { type: 'f5' } }, notes: [] };
  // Another tool's settings (none a CIS flag): refused, never turned into values.
  if (![...all.keys()].some((k) => RULES[k] || CIS_NOTES[k]))
    throw new NplError(
      ErrorCodes.CONFIG_INVALID,
      `holds no CIS flag (${[...all.keys()].slice(0, 5).join(', ') || 'nothing'}): give CIS's Helm values, its Deployment or its flags`,
    );
  refusePlaceholders([...all].map(([k, v]) => [`--${k}`, v]));
  for (const [key, values] of all) {
    const rule = RULES[key];
    const before = out.notes.length;
    const known = CIS_NOTES[key];
    if (rule) rule(values.at(-1)!, out, all);
    else if (known) {
      if (known[2] === undefined || values.at(-1) !== known[2])
        out.notes.push({ from: '', kind: known[0], why: known[1] });
    } else out.notes.push({ from: '', kind: 'no equivalent', why: 'not a CIS flag npl-lb knows' });
    for (const n of out.notes.slice(before)) n.from ||= `--${key}`;
  }
  // Beside a running CIS, never every LoadBalancer Service (nor, by the chart's default, the
  // default IngressClass): a Service is never served by both.
  put(out.values, 'defaultLoadBalancer', false);
  if (!all.has('manage-load-balancer-class-only'))
    out.notes.push({
      from: '--manage-load-balancer-class-only',
      kind: 'by hand',
      why: 'not given: CIS serves every LoadBalancer Service without a class; beside it npl-lb serves those of its own class (defaultLoadBalancer: false); set it true once CIS is gone',
    });
  if (!('serviceType' in out.values)) {
    // CIS's default pool member type is nodeport.
    put(out.values, 'serviceType', 'NodePort');
    out.notes.push({
      from: '--pool-member-type',
      kind: 'changed',
      why: "not given: CIS's default (nodeport) is kept as NodePort; NodePortLocal is npl-lb's own mode (serviceType: NodePortLocal)",
    });
  }
  out.notes.push({
    from: 'vip.cidrs',
    kind: 'by hand',
    why: 'CIS takes each VIP from an annotation or its IPAM: give npl-lb the ranges it allocates from (vip.cidrs); a Service asks one with spec.loadBalancerIP or npl-lb.io/vip',
  });
  if (!all.has('bigip-url'))
    out.notes.push({
      from: '--bigip-url',
      kind: 'by hand',
      why: "not given: set adapter.f5.url to the BIG-IP's https:// address",
    });
  if (!('clusterName' in out.values))
    out.notes.push({
      from: '--bigip-partition',
      kind: 'by hand',
      why: 'not given: set clusterName (the owner mark on the device)',
    });
  return out;
}
