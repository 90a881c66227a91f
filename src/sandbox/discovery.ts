/**
 * Legacy discovery documents (/api, /apis, /api/v1, /apis/<group>/<version>) and /version.
 */
import { apiVersionOf, type ResourceType } from './kinds.ts';
import { hasScale } from './scale.ts';

const VERBS = ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'];

export const SERVER_VERSION = {
  major: '1',
  minor: '35',
  gitVersion: 'v1.35.0+npl-lb-sandbox',
  gitCommit: '0000000000000000000000000000000000000000',
  gitTreeState: 'clean',
  buildDate: '2026-01-01T00:00:00Z',
  goVersion: 'go1.25.0',
  compiler: 'gc',
  platform: 'linux/amd64',
};

function resourceEntries(t: ResourceType): object[] {
  const main = {
    name: t.plural,
    singularName: t.singular,
    namespaced: t.namespaced,
    kind: t.kind,
    verbs: VERBS,
    ...(t.shortNames.length ? { shortNames: t.shortNames } : {}),
    ...(t.categories ? { categories: t.categories } : {}),
  };
  const scale = hasScale(t)
    ? [
        {
          name: `${t.plural}/scale`,
          singularName: '',
          namespaced: t.namespaced,
          group: 'autoscaling',
          version: 'v1',
          kind: 'Scale',
          verbs: ['get', 'patch', 'update'],
        },
      ]
    : [];
  // A Pod's kubelet-backed subresources (pod-subresources.ts), as the API server lists them.
  const kubelet =
    t.kind === 'Pod' && t.group === '' && !t.custom
      ? (
          [
            ['pods/log', ['get'], 'Pod'],
            ['pods/exec', ['create', 'get'], 'PodExecOptions'],
            ['pods/attach', ['create', 'get'], 'PodAttachOptions'],
            ['pods/portforward', ['create', 'get'], 'PodPortForwardOptions'],
          ] as const
        ).map(([name, verbs, kind]) => ({ name, singularName: '', namespaced: true, kind, verbs }))
      : [];
  if (!t.hasStatus) return [main, ...scale, ...kubelet];
  return [
    main,
    {
      name: `${t.plural}/status`,
      singularName: '',
      namespaced: t.namespaced,
      kind: t.kind,
      verbs: ['get', 'patch', 'update'],
    },
    ...scale,
    ...kubelet,
  ];
}

export function apiResourceList(
  all: readonly ResourceType[],
  group: string,
  version: string,
): object | undefined {
  const types = all.filter((t) => t.group === group && t.version === version);
  if (types.length === 0) return undefined;
  return {
    kind: 'APIResourceList',
    apiVersion: 'v1',
    groupVersion: apiVersionOf({ group, version }),
    resources: types.flatMap(resourceEntries),
  };
}

export function coreVersions(serverAddress: string): object {
  return {
    kind: 'APIVersions',
    versions: ['v1'],
    serverAddressByClientCIDRs: [{ clientCIDR: '0.0.0.0/0', serverAddress }],
  };
}

/** A group's versions, the preferred first: a custom group prefers its CRD's storage version, as the server sorts by priority. */
function groupEntry(all: readonly ResourceType[], name: string): object {
  const types = all.filter((t) => t.group === name);
  const preferred = types.find((t) => t.custom && t.custom.storageVersion === t.version)?.version;
  const names = [...new Set(types.map((t) => t.version))].sort((a, b) =>
    a === preferred ? -1 : b === preferred ? 1 : 0,
  );
  const versions = names.map((v) => ({ groupVersion: `${name}/${v}`, version: v }));
  return { name, versions, preferredVersion: versions[0] };
}

export function apiGroupList(all: readonly ResourceType[]): object {
  const names = [...new Set(all.map((t) => t.group).filter((g) => g !== ''))];
  return { kind: 'APIGroupList', apiVersion: 'v1', groups: names.map((n) => groupEntry(all, n)) };
}

export function apiGroup(all: readonly ResourceType[], name: string): object | undefined {
  if (!all.some((t) => t.group === name)) return undefined;
  return { kind: 'APIGroup', apiVersion: 'v1', ...groupEntry(all, name) };
}
