/**
 * The CIS flags npl-lb has no setting for, each with why (the flags of k8s-bigip-ctlr 2.9 to 2.20,
 * as its `main.go` defines them). Kept apart from the flags that carry over (cis.ts) so that the
 * long tail reads as a table. A flag given at CIS's own default says nothing.
 */
import type { MigrationNote } from '../../../src/migrate/result.ts';

type Note = [kind: MigrationNote['kind'], why: string, saidUnless?: string];

const NO_ROUTES = 'members are nodeIP:nodePort: BIG-IP needs no tunnel or route to Pod networks';
const NO_OPENSHIFT_ROUTES =
  'OpenShift Routes are not read by npl-lb: move them to Ingress or the Gateway API';
const NO_GTM = 'BIG-IP DNS (GTM) is not configured by npl-lb';
const NO_MULTI =
  'multi-cluster mode is not supported by npl-lb: one release per cluster, each its own partition';
const IN_CLUSTER = 'npl-lb runs in the cluster with its own ServiceAccount; nothing to set';
const NO_PERIOD =
  'npl-lb follows the cluster by watches and repairs what drifts on the device at each pass; there is no period to set';
const TLS_DEFAULTS =
  "HTTPS virtual servers take their certificates from the Ingress's spec.tls or the Gateway's listener, with AS3's TLS defaults";

export const CIS_NOTES: Readonly<Record<string, Note>> = {
  'as3-post-delay': [
    'no equivalent',
    'npl-lb posts one declaration at a time and waits for AS3 (tasks included)',
  ],
  'cccl-gtm-agent': ['no equivalent', NO_GTM],
  'cccl-log-level': ['no equivalent', 'npl-lb declares AS3 only (no CCCL); its log level is logLevel'],
  'cilium-name': ['no equivalent', NO_ROUTES],
  'cipher-group': ['no equivalent', TLS_DEFAULTS],
  ciphers: ['no equivalent', TLS_DEFAULTS],
  'tls-version': ['no equivalent', TLS_DEFAULTS],
  'default-client-ssl': ['no equivalent', TLS_DEFAULTS],
  'default-server-ssl': [
    'by hand',
    'npl-lb re-encrypts per Service, not by default: a BackendTLSPolicy (or the Ingress annotations npl-lb.io/backend-protocol: HTTPS, docs/tls.md) with the CA that signs the Pods’ certificates',
  ],
  'custom-resource-label': ['no equivalent', 'VirtualServer and TransportServer resources are not read'],
  'extended-spec-configmap': ['no equivalent', NO_MULTI],
  'filter-tenants': ['no equivalent', 'npl-lb declares only its own partition (adapter.f5.tenant)'],
  'flannel-name': ['no equivalent', NO_ROUTES],
  'openshift-sdn-name': ['no equivalent', NO_ROUTES],
  'shared-static-routes': ['no equivalent', NO_ROUTES],
  'gtm-bigip-url': ['no equivalent', NO_GTM],
  'gtm-bigip-username': ['no equivalent', NO_GTM],
  'gtm-bigip-password': ['no equivalent', NO_GTM],
  'gtm-credentials-directory': ['no equivalent', NO_GTM],
  'http-client-metrics': [
    'no equivalent',
    'npl-lb always exports its metrics on /metrics, the load-balancer calls among them',
    'false',
  ],
  hubmode: ['no equivalent', NO_MULTI, 'false'],
  'multi-cluster-mode': ['no equivalent', NO_MULTI],
  'local-cluster-name': ['no equivalent', NO_MULTI],
  'ipam-cluster-label': [
    'changed',
    'npl-lb allocates VIPs itself from vip.cidrs; the F5 IPAM controller is not used',
  ],
  'ipam-namespace': [
    'changed',
    'npl-lb allocates VIPs itself from vip.cidrs; the F5 IPAM controller is not used',
  ],
  kubeconfig: ['no equivalent', IN_CLUSTER],
  'running-in-cluster': ['no equivalent', IN_CLUSTER, 'true'],
  'log-file': ['no equivalent', 'npl-lb logs to stdout (JSON lines), for the cluster to collect'],
  'python-basedir': ['no equivalent', 'npl-lb has no Python driver'],
  'schema-db-base-dir': ['no equivalent', 'the AS3 schema npl-lb validates against is built in'],
  'manage-configmaps': [
    'no equivalent',
    'AS3 ConfigMaps are not read: npl-lb writes its own declaration',
    'false',
  ],
  'override-as3-declaration': [
    'no equivalent',
    'npl-lb declares its partition whole from the cluster; a hand override would be repaired away',
  ],
  'manage-ingress-class-only': [
    'no equivalent',
    'npl-lb serves only the Ingresses of its own class (and, with ingressClass.default, those with none); nothing to set',
  ],
  'manage-routes': ['no equivalent', NO_OPENSHIFT_ROUTES, 'false'],
  'route-label': ['no equivalent', NO_OPENSHIFT_ROUTES],
  'route-spec-configmap': ['no equivalent', NO_OPENSHIFT_ROUTES],
  'route-vserver-addr': ['no equivalent', NO_OPENSHIFT_ROUTES],
  'route-http-vserver': ['no equivalent', NO_OPENSHIFT_ROUTES],
  'route-https-vserver': ['no equivalent', NO_OPENSHIFT_ROUTES],
  'node-poll-interval': ['no equivalent', NO_PERIOD],
  'periodic-sync-interval': ['no equivalent', NO_PERIOD],
  'verify-interval': ['no equivalent', NO_PERIOD],
  'refresh-token-interval': ['no equivalent', 'npl-lb logs in again when the BIG-IP refuses its token'],
  'pod-graceful-shutdown': [
    'changed',
    "npl-lb always drains a terminating Pod's member (disabled, its connections kept) before it goes",
  ],
  'resolve-ingress-names': ['no equivalent', 'npl-lb does not resolve host names to VIPs'],
  'use-secrets': [
    'changed',
    "npl-lb always takes an Ingress's certificates from the Secrets its spec.tls names",
  ],
  version: ['no equivalent', 'a flag that prints the version; nothing to carry'],
  'vs-snat-pool-name': ['no equivalent', 'virtual servers use SNAT automap (AS3 snat: auto)'],
};
