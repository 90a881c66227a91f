/**
 * The resource types the sandbox serves: where they live in the URL space, how they are named,
 * which field selectors they accept, and which OpenAPI definition describes them.
 */
import type { JsonObject } from './json.ts';

export type NameRule = 'subdomain' | 'label1123' | 'label1035' | 'pathSegment';

export interface ResourceType {
  group: string;
  version: string;
  kind: string;
  plural: string;
  singular: string;
  namespaced: boolean;
  shortNames: string[];
  hasStatus: boolean;
  /** Fully qualified OpenAPI definition name, e.g. io.k8s.api.core.v1.Pod. */
  definition: string;
  nameRule: NameRule;
  /** Field selector labels beyond metadata.name and metadata.namespace. */
  fields: string[];
  /** Objects of this kind share storage with another type (events.k8s.io events with core events). */
  storage?: string;
  /** Whether `status` sent on create is kept (nodes) rather than reset (pods, services, ingresses). */
  keepsStatusOnCreate?: boolean;
  categories?: string[];
  /** Set on the kinds a CustomResourceDefinition defines. */
  custom?: CustomKind;
}

/** What a CustomResourceDefinition says of one served version of its kind. */
export interface CustomKind {
  /** The CRD's metadata.name (`<plural>.<group>`). */
  crdName: string;
  /** The version objects are stored at (other served versions are views of the same objects). */
  storageVersion: string;
  /** `openAPIV3Schema` of this version, when it has one. */
  schema: JsonObject | undefined;
  printerColumns: PrinterColumn[];
}

export interface PrinterColumn {
  name: string;
  type: string;
  format?: string;
  description?: string;
  priority?: number;
  jsonPath: string;
}

export const apiVersionOf = (t: Pick<ResourceType, 'group' | 'version'>): string =>
  t.group ? `${t.group}/${t.version}` : t.version;

export const storageKey = (t: ResourceType): string => t.storage ?? `${t.plural}.${t.group}`;

const core = (
  kind: string,
  plural: string,
  extra: Partial<ResourceType> & Pick<ResourceType, 'namespaced'>,
): ResourceType => ({
  group: '',
  version: 'v1',
  kind,
  plural,
  singular: kind.toLowerCase(),
  shortNames: [],
  hasStatus: false,
  definition: `io.k8s.api.core.v1.${kind}`,
  nameRule: 'subdomain',
  fields: [],
  ...extra,
});

const CORE_EVENT_FIELDS = [
  'involvedObject.kind',
  'involvedObject.namespace',
  'involvedObject.name',
  'involvedObject.uid',
  'involvedObject.apiVersion',
  'involvedObject.resourceVersion',
  'involvedObject.fieldPath',
  'reason',
  'reportingComponent',
  'source',
  'type',
];

/** A kind of a named group at v1. */
const group = (
  name: string,
  kind: string,
  plural: string,
  definition: string,
  extra: Partial<ResourceType> & Pick<ResourceType, 'namespaced'>,
): ResourceType => ({
  group: name,
  version: 'v1',
  kind,
  plural,
  singular: kind.toLowerCase(),
  shortNames: [],
  hasStatus: false,
  definition,
  nameRule: 'subdomain',
  fields: [],
  ...extra,
});

export const RESOURCE_TYPES: readonly ResourceType[] = [
  core('Namespace', 'namespaces', {
    namespaced: false,
    shortNames: ['ns'],
    hasStatus: true,
    nameRule: 'label1123',
    fields: ['status.phase'],
  }),
  core('Node', 'nodes', {
    namespaced: false,
    shortNames: ['no'],
    hasStatus: true,
    keepsStatusOnCreate: true,
    fields: ['spec.unschedulable'],
  }),
  core('Pod', 'pods', {
    namespaced: true,
    shortNames: ['po'],
    hasStatus: true,
    categories: ['all'],
    fields: [
      'spec.nodeName',
      'spec.restartPolicy',
      'spec.schedulerName',
      'spec.serviceAccountName',
      'spec.hostNetwork',
      'status.phase',
      'status.podIP',
      'status.nominatedNodeName',
    ],
  }),
  core('Service', 'services', {
    namespaced: true,
    shortNames: ['svc'],
    hasStatus: true,
    nameRule: 'label1035',
    categories: ['all'],
    fields: ['spec.clusterIP', 'spec.type'],
  }),
  core('ConfigMap', 'configmaps', { namespaced: true, shortNames: ['cm'] }),
  core('Secret', 'secrets', { namespaced: true, fields: ['type'] }),
  core('ServiceAccount', 'serviceaccounts', { namespaced: true, shortNames: ['sa'] }),
  group('apps', 'Deployment', 'deployments', 'io.k8s.api.apps.v1.Deployment', {
    namespaced: true,
    shortNames: ['deploy'],
    hasStatus: true,
    categories: ['all'],
  }),
  group('apps', 'DaemonSet', 'daemonsets', 'io.k8s.api.apps.v1.DaemonSet', {
    namespaced: true,
    shortNames: ['ds'],
    hasStatus: true,
    categories: ['all'],
  }),
  group('apps', 'ReplicaSet', 'replicasets', 'io.k8s.api.apps.v1.ReplicaSet', {
    namespaced: true,
    shortNames: ['rs'],
    hasStatus: true,
    categories: ['all'],
  }),
  group('rbac.authorization.k8s.io', 'Role', 'roles', 'io.k8s.api.rbac.v1.Role', {
    namespaced: true,
    nameRule: 'pathSegment',
  }),
  group('rbac.authorization.k8s.io', 'ClusterRole', 'clusterroles', 'io.k8s.api.rbac.v1.ClusterRole', {
    namespaced: false,
    nameRule: 'pathSegment',
  }),
  group('rbac.authorization.k8s.io', 'RoleBinding', 'rolebindings', 'io.k8s.api.rbac.v1.RoleBinding', {
    namespaced: true,
    nameRule: 'pathSegment',
  }),
  group(
    'rbac.authorization.k8s.io',
    'ClusterRoleBinding',
    'clusterrolebindings',
    'io.k8s.api.rbac.v1.ClusterRoleBinding',
    { namespaced: false, nameRule: 'pathSegment' },
  ),
  group('policy', 'PodDisruptionBudget', 'poddisruptionbudgets', 'io.k8s.api.policy.v1.PodDisruptionBudget', {
    namespaced: true,
    shortNames: ['pdb'],
    hasStatus: true,
  }),
  group('batch', 'Job', 'jobs', 'io.k8s.api.batch.v1.Job', {
    namespaced: true,
    hasStatus: true,
    categories: ['all'],
  }),
  group('networking.k8s.io', 'NetworkPolicy', 'networkpolicies', 'io.k8s.api.networking.v1.NetworkPolicy', {
    namespaced: true,
    shortNames: ['netpol'],
  }),
  group(
    'apiextensions.k8s.io',
    'CustomResourceDefinition',
    'customresourcedefinitions',
    'io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.CustomResourceDefinition',
    { namespaced: false, shortNames: ['crd', 'crds'], hasStatus: true, categories: ['api-extensions'] },
  ),
  group(
    'admissionregistration.k8s.io',
    'ValidatingAdmissionPolicy',
    'validatingadmissionpolicies',
    'io.k8s.api.admissionregistration.v1.ValidatingAdmissionPolicy',
    { namespaced: false, hasStatus: true, categories: ['api-extensions'] },
  ),
  group(
    'admissionregistration.k8s.io',
    'MutatingWebhookConfiguration',
    'mutatingwebhookconfigurations',
    'io.k8s.api.admissionregistration.v1.MutatingWebhookConfiguration',
    { namespaced: false, categories: ['api-extensions'] },
  ),
  group(
    'admissionregistration.k8s.io',
    'ValidatingWebhookConfiguration',
    'validatingwebhookconfigurations',
    'io.k8s.api.admissionregistration.v1.ValidatingWebhookConfiguration',
    { namespaced: false, categories: ['api-extensions'] },
  ),
  group(
    'admissionregistration.k8s.io',
    'ValidatingAdmissionPolicyBinding',
    'validatingadmissionpolicybindings',
    'io.k8s.api.admissionregistration.v1.ValidatingAdmissionPolicyBinding',
    { namespaced: false, categories: ['api-extensions'] },
  ),
  core('Endpoints', 'endpoints', { namespaced: true, shortNames: ['ep'], singular: 'endpoints' }),
  core('Event', 'events', {
    namespaced: true,
    shortNames: ['ev'],
    nameRule: 'pathSegment',
    fields: CORE_EVENT_FIELDS,
    storage: 'events',
  }),
  {
    group: 'discovery.k8s.io',
    version: 'v1',
    kind: 'EndpointSlice',
    plural: 'endpointslices',
    singular: 'endpointslice',
    namespaced: true,
    shortNames: [],
    hasStatus: false,
    definition: 'io.k8s.api.discovery.v1.EndpointSlice',
    nameRule: 'subdomain',
    fields: [],
  },
  {
    group: 'networking.k8s.io',
    version: 'v1',
    kind: 'Ingress',
    plural: 'ingresses',
    singular: 'ingress',
    namespaced: true,
    shortNames: ['ing'],
    hasStatus: true,
    definition: 'io.k8s.api.networking.v1.Ingress',
    nameRule: 'subdomain',
    fields: [],
  },
  {
    group: 'networking.k8s.io',
    version: 'v1',
    kind: 'IngressClass',
    plural: 'ingressclasses',
    singular: 'ingressclass',
    namespaced: false,
    shortNames: [],
    hasStatus: false,
    definition: 'io.k8s.api.networking.v1.IngressClass',
    nameRule: 'subdomain',
    fields: [],
  },
  {
    group: 'coordination.k8s.io',
    version: 'v1',
    kind: 'Lease',
    plural: 'leases',
    singular: 'lease',
    namespaced: true,
    shortNames: [],
    hasStatus: false,
    definition: 'io.k8s.api.coordination.v1.Lease',
    nameRule: 'subdomain',
    fields: [],
  },
  {
    group: 'events.k8s.io',
    version: 'v1',
    kind: 'Event',
    plural: 'events',
    singular: 'event',
    namespaced: true,
    shortNames: ['ev'],
    hasStatus: false,
    definition: 'io.k8s.api.events.v1.Event',
    nameRule: 'pathSegment',
    fields: ['regarding.kind', 'regarding.namespace', 'regarding.name', 'regarding.uid', 'reason', 'type'],
    storage: 'events',
  },
];

export function groupVersions(): { group: string; version: string }[] {
  const seen = new Map<string, { group: string; version: string }>();
  for (const t of RESOURCE_TYPES) seen.set(apiVersionOf(t), { group: t.group, version: t.version });
  return [...seen.values()];
}

export function supportedFields(t: ResourceType): string[] {
  return ['metadata.name', 'metadata.namespace', ...t.fields];
}
