/**
 * Cuts the Kubernetes OpenAPI v2 document down to what the sandbox serves: the paths of its group
 * versions, the shared parameters, and the definitions they reach. Pure; the script
 * `scripts/extract-openapi.ts` writes the result next to the sandbox so it ships with the package.
 */
import { groupVersions } from './kinds.ts';

export type { Json, JsonObject } from './json.ts';
import type { Json, JsonObject } from './json.ts';

export interface SwaggerDoc extends JsonObject {
  paths: { [path: string]: JsonObject };
  definitions: { [name: string]: JsonObject };
  parameters: { [name: string]: JsonObject };
}

export function gvPrefix(group: string, version: string): string {
  return group ? `/apis/${group}/${version}/` : `/api/${version}/`;
}

function collectRefs(node: Json, out: Set<string>): void {
  if (Array.isArray(node)) {
    for (const n of node) collectRefs(n, out);
  } else if (node && typeof node === 'object') {
    for (const [k, v] of Object.entries(node)) {
      if (k === '$ref' && typeof v === 'string') out.add(v);
      else collectRefs(v, out);
    }
  }
}

export function extractServed(full: SwaggerDoc): SwaggerDoc {
  const prefixes = groupVersions().map((gv) => gvPrefix(gv.group, gv.version));
  const paths: SwaggerDoc['paths'] = {};
  for (const [p, item] of Object.entries(full.paths)) {
    if (prefixes.some((pre) => p.startsWith(pre) || `${p}/` === pre)) paths[p] = item;
  }
  const refs = new Set<string>();
  collectRefs(paths, refs);
  const definitions: SwaggerDoc['definitions'] = {};
  const parameters: SwaggerDoc['parameters'] = {};
  const queue = [...refs];
  while (queue.length > 0) {
    const ref = queue.pop()!;
    const [, section, name] = /^#\/(definitions|parameters)\/(.+)$/.exec(ref) ?? [];
    if (!section || !name) continue;
    const table = section === 'definitions' ? definitions : parameters;
    if (table[name]) continue;
    const src = section === 'definitions' ? full.definitions[name] : full.parameters[name];
    if (!src) throw new Error(`dangling reference ${ref}`);
    table[name] = src;
    const more = new Set<string>();
    collectRefs(src, more);
    queue.push(...more);
  }
  const sorted = <T>(o: Record<string, T>): Record<string, T> =>
    Object.fromEntries(Object.entries(o).sort(([a], [b]) => a.localeCompare(b)));
  return {
    swagger: full.swagger ?? '2.0',
    info: full.info ?? {},
    paths: sorted(paths),
    definitions: sorted(definitions),
    parameters: sorted(parameters),
  };
}
