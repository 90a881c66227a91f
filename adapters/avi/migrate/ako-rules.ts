/**
 * What each of AKO's Helm settings becomes in npl-lb's values (RULES), and the settings about AKO's
 * own Pod that npl-lb's chart sets its own way (OWN_POD). AKO writes booleans as strings ("true")
 * and log levels in upper case. Pure; read by ako.ts.
 */
import { ErrorCodes, NplError } from '../../../src/runtime/errors.ts';
import { z } from 'zod';
import { clusterNameOf, type Migration, put } from '../../../src/migrate/result.ts';

const on = (v: unknown): boolean => v === true || v === 'true';
export const section = z.record(z.string(), z.unknown()).catch({});

const vipNetwork = z.looseObject({
  networkName: z.string(),
  cidr: z.string().optional(),
  v6cidr: z.string().optional(),
});

/** What each AKO setting becomes: values set, and a note when it is not carried over as it was. */
type Rule = (value: unknown, out: Migration, values: Record<string, unknown>) => void;

const noEquivalent =
  (why: string, unlessDefault?: unknown): Rule =>
  (v, out) => {
    if (unlessDefault !== undefined && String(v) === String(unlessDefault)) return;
    if (v === '' || v === false || v === 'false' || (Array.isArray(v) && v.length === 0)) return;
    out.notes.push({ from: '', kind: 'no equivalent', why });
  };

const LOG_LEVELS: Record<string, string> = { DEBUG: 'debug', INFO: 'info', WARN: 'warn', ERROR: 'error' };

export const RULES: Record<string, Rule> = {
  'AKOSettings.primaryInstance': (v, out) => {
    if (v === false || v === 'false')
      out.notes.push({
        from: '',
        kind: 'by hand',
        why: 'a second controller in one cluster is another npl-lb release with its own clusterName and classes',
      });
  },
  'AKOSettings.enableEvents': (v, out) => {
    if (!on(v)) out.notes.push({ from: '', kind: 'no equivalent', why: 'npl-lb always writes Events' });
  },
  'AKOSettings.logLevel': (v, out) =>
    put(out.values, 'logLevel', LOG_LEVELS[String(v).toUpperCase()] ?? 'info'),
  'AKOSettings.fullSyncFrequency': noEquivalent(
    'npl-lb follows the cluster by watches and repairs what drifts at each pass; there is no full-sync period to set',
    '1800',
  ),
  'AKOSettings.apiServerPort': (v, out) => put(out.values, 'controller.httpPort', Number(v) || 8080),
  'AKOSettings.deleteConfig': (v, out) => put(out.values, 'deleteConfig', on(v)),
  'AKOSettings.disableStaticRouteSync': noEquivalent(
    'members are nodeIP:nodePort (NodePortLocal): the load balancer needs no routes to Pod networks',
  ),
  'AKOSettings.clusterName': (v, out) => {
    const c = clusterNameOf(String(v));
    put(out.values, 'clusterName', c.name);
    if (c.changed)
      out.notes.push({
        from: '',
        kind: 'changed',
        why: `npl-lb takes a DNS label of at most 32 characters: ${JSON.stringify(String(v))} became ${c.name}`,
      });
  },
  'AKOSettings.cniPlugin': (v, out) => {
    // Antrea runs NodePortLocal already (AKO's NPL mode uses it): npl-lb reads its annotations, and
    // a second agent would fight it for the node ports.
    if (String(v).toLowerCase() === 'antrea') {
      put(out.values, 'agent.enabled', false);
      out.notes.push({
        from: '',
        kind: 'changed',
        why: "Antrea's NodePortLocal runs here: npl-lb reads its annotations, its own agent is off (agent.enabled: false)",
      });
    } else
      out.notes.push({
        from: '',
        kind: 'no equivalent',
        why: 'npl-lb works on any CNI (its own NodePortLocal agent); nothing to set',
      });
  },
  'AKOSettings.enableEVH': (v, out) =>
    out.notes.push({
      from: '',
      kind: on(v) ? 'no equivalent' : 'changed',
      why: "npl-lb writes one virtual service per IngressClass and port, with SNI children for certificates (AKO's model without EVH)",
    }),
  'AKOSettings.layer7Only': (v, out) => {
    // AKO serves every LoadBalancer Service unless layer7Only; npl-lb those of its class, or all.
    put(out.values, 'defaultLoadBalancer', !on(v));
  },
  'AKOSettings.namespaceSelector': (v, out) => {
    const sel = z
      .looseObject({ labelKey: z.string().catch(''), labelValue: z.string().catch('') })
      .catch({ labelKey: '', labelValue: '' })
      .parse(v);
    if (sel.labelKey || sel.labelValue)
      out.notes.push({
        from: '',
        kind: 'by hand',
        why: `npl-lb selects namespaces by name: list those labelled ${sel.labelKey}=${sel.labelValue} in namespaces.include`,
      });
  },
  'AKOSettings.servicesAPI': noEquivalent(
    'npl-lb serves the Gateway API (GatewayClass npl-lb) beside Ingress and LoadBalancer Services',
  ),
  'AKOSettings.vipPerNamespace': noEquivalent(
    'npl-lb gives a VIP per IngressClass, LoadBalancer Service and Gateway',
  ),
  'AKOSettings.istioEnabled': noEquivalent('npl-lb does not integrate with Istio'),
  'AKOSettings.blockedNamespaceList': (v, out) => {
    const list = z.array(z.string()).catch([]).parse(v);
    if (list.length > 0) put(out.values, 'namespaces.exclude', list);
  },
  'AKOSettings.ipFamily': (v, out) => {
    if (String(v).toUpperCase() === 'V6')
      out.notes.push({
        from: '',
        kind: 'changed',
        why: "npl-lb picks each Service's families from its ipFamilies; add an IPv6 range (vipNetwork.cidr6 or vip.cidrs), see docs/ipv6.md",
      });
  },
  'AKOSettings.useDefaultSecretsOnly': noEquivalent(
    "npl-lb takes the certificates an Ingress or Gateway names from the object's own namespace (no OpenShift default secrets)",
  ),
  'AKOSettings.vpcMode': noEquivalent('NSX-T clouds (VPC mode) are not supported by npl-lb yet'),
  'AKOSettings.enableExternalNameService': noEquivalent(
    'ExternalName Services are not load balanced by npl-lb',
  ),
  // AKO 1.4 and earlier: the VIP network as three settings (vipNetworkList since).
  'NetworkSettings.networkName': (v, out) => {
    if (String(v ?? '')) put(out.values, 'adapter.avi.vipNetwork.name', String(v));
  },
  'NetworkSettings.subnetIP': (_v, out, values) => oldSubnet(out, values),
  'NetworkSettings.subnetPrefix': (_v, out, values) => oldSubnet(out, values),
  'NetworkSettings.defaultDomain': noEquivalent('npl-lb does not write DNS records'),
  'NetworkSettings.enableAutogw': (v, out) => {
    if (!on(v))
      out.notes.push({
        from: '',
        kind: 'no equivalent',
        why: "npl-lb leaves the Service Engines' auto gateway to their SE group's settings",
      });
  },
  'NetworkSettings.nodeNetworkList': noEquivalent(
    'members are node addresses the agent publishes; no node network placement is needed',
  ),
  'NetworkSettings.enableRHI': noEquivalent('route health injection is not configured by npl-lb'),
  'NetworkSettings.nsxtT1LR': noEquivalent('NSX-T clouds are not supported by npl-lb yet'),
  'NetworkSettings.bgpPeerLabels': noEquivalent('BGP peer selection is not configured by npl-lb'),
  'NetworkSettings.vipNetworkList': (v, out) => {
    const list = z.array(vipNetwork).catch([]).parse(v);
    const [first, ...rest] = list;
    if (!first) return;
    put(out.values, 'adapter.avi.vipNetwork', {
      name: first.networkName,
      cidr: first.cidr ?? '',
      ...(first.v6cidr ? { cidr6: first.v6cidr } : {}),
    });
    if (!first.cidr)
      out.notes.push({
        from: '',
        kind: 'by hand',
        why: `network ${first.networkName} has no cidr: npl-lb's IPAM mode needs the IPv4 subnet (adapter.avi.vipNetwork.cidr)`,
      });
    if (rest.length > 0)
      out.notes.push({
        from: '',
        kind: 'no equivalent',
        why: `npl-lb allocates from one VIP network; ${rest.map((n) => n.networkName).join(', ')} left out`,
      });
  },
  'L7Settings.defaultIngController': (v, out) => {
    // Beside a running AKO, npl-lb never takes the default class: said, for the day AKO goes.
    if (!on(v)) put(out.values, 'ingressClass.default', false);
    else
      out.notes.push({
        from: '',
        kind: 'by hand',
        why: 'AKO is the default IngressClass: npl-lb does not take it beside a running AKO; set ingressClass.default: true once AKO is gone',
      });
  },
  'L7Settings.noPGForSNI': noEquivalent(
    'npl-lb sends each route to its pool group as the model says; there is no knob',
  ),
  'L7Settings.serviceType': (v, out) => {
    const t = String(v);
    put(
      out.values,
      'serviceType',
      ['NodePortLocal', 'NodePort', 'ClusterIP'].includes(t) ? t : 'NodePortLocal',
    );
    if (t === 'ClusterIP')
      out.notes.push({
        from: '',
        kind: 'changed',
        why: 'ClusterIP mode needs the Pod network routable from the Service Engines; NodePortLocal (serviceType: NodePortLocal) does not',
      });
  },
  'L7Settings.l7ShardingScheme': noEquivalent(
    'npl-lb writes one virtual service per IngressClass and port (no sharding)',
  ),
  'L7Settings.fqdnReusePolicy': noEquivalent(
    'npl-lb serves a host from the Ingresses of every namespace in its class (as InterNamespaceAllowed); there is no per-namespace claim on a host name',
    'InterNamespaceAllowed',
  ),
  'L4Settings.advancedL4': noEquivalent(
    'what advancedL4 did is the Gateway API in npl-lb (GatewayClass npl-lb)',
  ),
  'L4Settings.defaultLBController': (v, out) =>
    out.notes.push(
      on(v)
        ? {
            from: '',
            kind: 'by hand',
            why: 'AKO is the default LoadBalancer controller: beside it npl-lb serves those of its loadBalancerClass only (defaultLoadBalancer: false); set it true once AKO is gone',
          }
        : {
            from: '',
            kind: 'changed',
            why: 'AKO serves only the Services of its loadBalancerClass: npl-lb likewise serves those of its own (loadBalancerClass: npl-lb.io/lb)',
          },
    ),
  'L7Settings.shardVSSize': noEquivalent(
    'npl-lb writes one virtual service per IngressClass and port (no sharding)',
  ),
  'L7Settings.passthroughShardSize': noEquivalent('TLS passthrough is a Gateway TLS listener in npl-lb'),
  'L7Settings.enableMCI': noEquivalent('multi-cluster Ingress is not supported by npl-lb'),
  'L4Settings.defaultDomain': noEquivalent('npl-lb does not write DNS records'),
  'L4Settings.autoFQDN': noEquivalent('npl-lb does not write DNS records', 'default'),
  'ControllerSettings.serviceEngineGroupName': (v, out) =>
    put(out.values, 'adapter.avi.serviceEngineGroup', String(v)),
  'ControllerSettings.controllerVersion': (v, out) => {
    if (String(v)) put(out.values, 'adapter.avi.controllerVersion', String(v));
  },
  'ControllerSettings.cloudName': (v, out) => put(out.values, 'adapter.avi.cloud', String(v)),
  'ControllerSettings.controllerHost': (v, out) => {
    const host = String(v).trim();
    if (!host) {
      out.notes.push({
        from: '',
        kind: 'by hand',
        why: "set adapter.avi.url to the Avi Controller's https:// address",
      });
      return;
    }
    put(out.values, 'adapter.avi.url', controllerUrl(host));
  },
  // Avi owns per object, not per tenant: npl-lb marks what it writes (created_by) and leaves any
  // object of another owner alone, so sharing AKO's tenant and VRF is safe (as two AKOs do).
  'ControllerSettings.tenantName': (v, out) => put(out.values, 'adapter.avi.tenant', String(v) || 'admin'),
  'ControllerSettings.vrfName': (v, out) => {
    if (String(v ?? '')) put(out.values, 'adapter.avi.vrf', String(v));
  },
  'ControllerSettings.dedicatedTenantMode': noEquivalent(
    'npl-lb reads and writes only its own tenant (adapter.avi.tenant) already',
  ),
  'ControllerSettings.tenantsPerCluster': noEquivalent(
    'npl-lb writes into one tenant per release (adapter.avi.tenant)',
  ),
  nodePortSelector: (v, out) => {
    const sel = z
      .looseObject({ key: z.string().catch(''), value: z.string().catch('') })
      .catch({ key: '', value: '' })
      .parse(v);
    if (sel.key || sel.value)
      out.notes.push({
        from: '',
        kind: 'no equivalent',
        why: 'NodePort mode uses every Ready node; cordon or label nodes node.kubernetes.io/exclude-from-external-load-balancers to leave them out',
      });
  },
  resources: (v, out) => put(out.values, 'controller.resources', v),
  replicaCount: (v, out) => {
    if (Number(v) > 1) put(out.values, 'controller.replicas', Number(v));
  },
  'avicredentials.username': (v, out) => {
    if (String(v ?? '')) put(out.values, 'credentials.username', String(v));
  },
  'avicredentials.password': (v, out) => {
    if (String(v ?? ''))
      out.notes.push({
        from: '',
        kind: 'by hand',
        why: 'not printed (a secret): give it with --set credentials.password=... or a Secret named in credentials.existingSecret',
      });
  },
  'avicredentials.authtoken': noEquivalent('npl-lb logs in with a username and password'),
  'avicredentials.certificateAuthorityData': (v, out) => {
    const ca = String(v ?? '').trim();
    if (!ca) return;
    const pem = ca.startsWith('-----BEGIN') ? ca : Buffer.from(ca, 'base64').toString('utf8');
    if (pem.startsWith('-----BEGIN CERTIFICATE-----')) put(out.values, 'adapter.avi.caBundle', pem);
    else
      out.notes.push({
        from: '',
        kind: 'by hand',
        why: "not a PEM certificate: put the Avi Controller's CA in adapter.avi.caBundle",
      });
  },
  'featureGates.GatewayAPI': (v, out) => put(out.values, 'gatewayClass.create', on(v)),
  'featureGates.EnablePrometheus': (v, out) => {
    if (on(v)) put(out.values, 'metrics.serviceMonitor.enabled', true);
  },
  namespace: noEquivalent('install npl-lb in a namespace of its own (helm install -n npl-lb-system)'),
};

/** The Avi Controller's address: https:// (or http://) and a host; a bare host or IP is taken as https. */
function controllerUrl(host: string): string {
  const url = /^[a-z][a-z0-9+.-]*:\/\//i.test(host) ? host : `https://${host}`;
  let u: URL | undefined;
  try {
    u = new URL(url);
  } catch {
    u = undefined;
  }
  if (!u || (u.protocol !== 'https:' && u.protocol !== 'http:') || !u.hostname || /\s/.test(host))
    throw new NplError(
      ErrorCodes.CONFIG_INVALID,
      `ControllerSettings.controllerHost=${JSON.stringify(host.slice(0, 80))}: not a host or an http(s) URL`,
    );
  return url;
}

/** AKO 1.4's subnetIP and subnetPrefix: the VIP network's subnet, when both are given. */
function oldSubnet(out: Migration, values: Record<string, unknown>): void {
  const net = section.parse(values.NetworkSettings);
  const ip = String(net.subnetIP ?? '');
  const prefix = String(net.subnetPrefix ?? '');
  if (ip && prefix) put(out.values, 'adapter.avi.vipNetwork.cidr', `${ip}/${prefix}`);
  else if (ip || prefix)
    out.notes.push({
      from: '',
      kind: 'by hand',
      why: 'subnetIP and subnetPrefix go together: give the subnet as adapter.avi.vipNetwork.cidr',
    });
}

/** Settings about AKO's own Pod that npl-lb's chart sets its own way. */
export const OWN_POD = [
  'image',
  'imagePullSecrets',
  'securityContext',
  'podSecurityContext',
  'rbac',
  'persistentVolumeClaim',
  'mountPath',
  'logFile',
  'GatewayAPI',
  'service',
  'akoGatewayLogFile',
  'ako-crd-operator',
  'akoCRDOperator',
  'akoCRDOperatorLogFile',
  'crdOperatorResources',
  'statusStreamer',
  'vmciRelayResources',
  'persistentVolumeClaimSpec',
  'priorityClassName',
  'nameOverride',
  'fullnameOverride',
  'serviceAccount',
];
