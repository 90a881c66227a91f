/**
 * OpenAPI v3 documents for the group versions CRDs add, shaped as the apiextensions server
 * publishes them: the kind's schema (metadata as ObjectMeta), its list, and paths whose operations
 * carry `x-kubernetes-group-version-kind` and the `fieldValidation` parameter kubectl looks for.
 */
import { type Json, type JsonObject, type OpenApi, v3DocHash } from '../openapi.ts';
import type { ResourceType } from '../kinds.ts';

const META = 'io.k8s.apimachinery.pkg.apis.meta.v1';
const ref = (name: string): JsonObject => ({ $ref: `#/components/schemas/${name}` });

function gvPath(t: ResourceType): string {
  return `apis/${t.group}/${t.version}`;
}

/**
 * The `hash` of a document's URL, as the API server gives it (SHA-512 of the document, upper-case
 * hex), once per catalog snapshot: kubectl and helm read the root on every run, and hashing each
 * group's document again each time was most of the sandbox's CPU under them.
 */
function docHash(types: readonly ResourceType[], key: string, openapi: OpenApi): string {
  let hashes = hashCache.get(types);
  if (!hashes) hashCache.set(types, (hashes = new Map()));
  let h = hashes.get(key);
  if (h === undefined) {
    h = v3DocHash(customV3Doc(types, key, openapi) ?? '');
    hashes.set(key, h);
  }
  return h;
}
const hashCache = new WeakMap<readonly ResourceType[], Map<string, string>>();

/** Root entries (`paths` of /openapi/v3) for every custom group version. */
export function customV3Keys(types: readonly ResourceType[], openapi: OpenApi): JsonObject {
  const out: JsonObject = {};
  for (const t of types) {
    if (!t.custom) continue;
    const key = gvPath(t);
    out[key] = {
      serverRelativeURL: `/openapi/v3/${key}?hash=${docHash(types, key, openapi)}`,
    };
  }
  return out;
}

function collectRefs(node: Json | undefined, out: Set<string>): void {
  if (Array.isArray(node)) for (const n of node) collectRefs(n, out);
  else if (node && typeof node === 'object') {
    for (const [k, v] of Object.entries(node)) {
      if (k === '$ref' && typeof v === 'string')
        out.add(v.replace(/^#\/(definitions|components\/schemas)\//, ''));
      else collectRefs(v, out);
    }
  }
}

/** The built-in definitions a custom document refers to (ObjectMeta, ListMeta, Status, ... and what they reach). */
function builtIns(openapi: OpenApi, roots: string[]): JsonObject {
  const out: JsonObject = {};
  const queue = [...roots];
  while (queue.length > 0) {
    const name = queue.pop()!;
    if (out[name] !== undefined) continue;
    const def = openapi.definition(name);
    if (!def) continue;
    out[name] = JSON.parse(
      JSON.stringify(def).replaceAll('"#/definitions/', '"#/components/schemas/'),
    ) as Json;
    const more = new Set<string>();
    collectRefs(def, more);
    queue.push(...more);
  }
  return out;
}

function kindSchema(t: ResourceType): JsonObject {
  const schema = structuredClone(
    t.custom?.schema ?? { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
  );
  const props = (schema.properties ?? {}) as JsonObject;
  props.apiVersion = {
    type: 'string',
    description: 'APIVersion defines the versioned schema of this representation of an object.',
  };
  props.kind = {
    type: 'string',
    description: 'Kind is a string value representing the REST resource this object represents.',
  };
  props.metadata = { allOf: [ref(`${META}.ObjectMeta`)], default: {} };
  schema.properties = props;
  schema['x-kubernetes-group-version-kind'] = [{ group: t.group, version: t.version, kind: t.kind }];
  return schema;
}

function listSchema(t: ResourceType): JsonObject {
  return {
    type: 'object',
    required: ['items'],
    properties: {
      apiVersion: { type: 'string' },
      kind: { type: 'string' },
      items: { type: 'array', items: ref(t.definition) },
      metadata: { allOf: [ref(`${META}.ListMeta`)], default: {} },
    },
    'x-kubernetes-group-version-kind': [{ group: t.group, version: t.version, kind: `${t.kind}List` }],
  };
}

const query = (name: string, type = 'string'): JsonObject => ({ name, in: 'query', schema: { type } });
const WRITE_PARAMS = [query('dryRun'), query('fieldManager'), query('fieldValidation')];
const body = (schema: JsonObject, types = ['application/json', 'application/yaml']): JsonObject => ({
  content: Object.fromEntries(types.map((c) => [c, { schema }])),
  required: true,
});
const ok = (schema: JsonObject): JsonObject => ({
  '200': { description: 'OK', content: { 'application/json': { schema }, 'application/yaml': { schema } } },
});
const PATCH_TYPES = [
  'application/json-patch+json',
  'application/merge-patch+json',
  'application/apply-patch+yaml',
];

function op(t: ResourceType, action: string, extra: JsonObject): JsonObject {
  return {
    operationId: `${action}${t.kind}`,
    'x-kubernetes-action': action,
    'x-kubernetes-group-version-kind': { group: t.group, version: t.version, kind: t.kind },
    ...extra,
  };
}

function paths(t: ResourceType): JsonObject {
  const base = `/apis/${t.group}/${t.version}/${t.namespaced ? 'namespaces/{namespace}/' : ''}${t.plural}`;
  const item = ref(t.definition);
  const list = ref(`${t.definition}List`);
  const nsParam: Json[] = t.namespaced
    ? [{ name: 'namespace', in: 'path', required: true, schema: { type: 'string' } }]
    : [];
  const nameParams: Json[] = [
    { name: 'name', in: 'path', required: true, schema: { type: 'string' } },
    ...nsParam,
  ];
  const objectOps = (suffix: string): JsonObject => ({
    get: op(t, 'get', { responses: ok(item) }),
    put: op(t, 'put', { parameters: WRITE_PARAMS, requestBody: body(item), responses: ok(item) }),
    patch: op(t, 'patch', {
      parameters: [...WRITE_PARAMS, query('force', 'boolean')],
      requestBody: body({ $ref: `#/components/schemas/${META}.Patch` }, PATCH_TYPES),
      responses: ok(item),
    }),
    ...(suffix
      ? {}
      : { delete: op(t, 'delete', { responses: ok({ $ref: `#/components/schemas/${META}.Status` }) }) }),
    parameters: nameParams,
  });
  const out: JsonObject = {
    [base]: {
      get: op(t, 'list', {
        parameters: [query('labelSelector'), query('fieldSelector'), query('watch', 'boolean')],
        responses: ok(list),
      }),
      post: op(t, 'post', { parameters: WRITE_PARAMS, requestBody: body(item), responses: ok(item) }),
      delete: op(t, 'deletecollection', { responses: ok({ $ref: `#/components/schemas/${META}.Status` }) }),
      parameters: nsParam,
    },
    [`${base}/{name}`]: objectOps(''),
  };
  if (t.hasStatus) out[`${base}/{name}/status`] = objectOps('status');
  return out;
}

/** The document of one custom group version (`apis/<group>/<version>`), as JSON text, or undefined. */
export function customV3Doc(
  types: readonly ResourceType[],
  key: string,
  openapi: OpenApi,
): string | undefined {
  let docs = cache.get(types);
  if (!docs) cache.set(types, (docs = new Map()));
  if (!docs.has(key)) docs.set(key, buildDoc(types, key, openapi));
  return docs.get(key);
}

/** Documents per catalog snapshot (the catalog hands out a new array whenever a CRD changes). */
const cache = new WeakMap<readonly ResourceType[], Map<string, string | undefined>>();

function buildDoc(types: readonly ResourceType[], key: string, openapi: OpenApi): string | undefined {
  const served = types.filter((t) => t.custom && gvPath(t) === key);
  const first = served[0];
  if (!first) return undefined;
  const schemas: JsonObject = builtIns(openapi, [
    `${META}.ObjectMeta`,
    `${META}.ListMeta`,
    `${META}.Status`,
    `${META}.Patch`,
  ]);
  let allPaths: JsonObject = {};
  for (const t of served) {
    schemas[t.definition] = kindSchema(t);
    schemas[`${t.definition}List`] = listSchema(t);
    allPaths = { ...allPaths, ...paths(t) };
  }
  return JSON.stringify({
    openapi: '3.0.0',
    info: { title: 'Kubernetes CRD Swagger', version: 'v0.1.0' },
    paths: allPaths,
    components: { schemas },
  });
}
