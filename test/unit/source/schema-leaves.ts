/**
 * The leaves of a Gateway API kind's v1 spec schema, read from the bundled v1.6.1 CRDs (the
 * standard install; `experimental`: HTTPRoute's experimental CRD, bundled beside it).
 */
import { readFileSync } from 'node:fs';
import { parseAllDocuments } from 'yaml';

type Json = Record<string, unknown>;
interface Schema {
  type?: string;
  properties?: Record<string, Schema>;
  items?: Schema;
}

/** Every leaf path of a kind's v1 spec schema (`spec.rules[].matches[].method`). */
export function schemaLeaves(kind: string, channel: 'standard' | 'experimental' = 'standard'): string[] {
  const file =
    channel === 'experimental' ? 'experimental-httproutes-v1.6.1.yaml' : 'standard-install-v1.6.1.yaml';
  const crds = parseAllDocuments(
    readFileSync(new URL(`../../../src/sandbox/gateway-api/${file}`, import.meta.url), 'utf8'),
  ).map((d) => d.toJSON() as Json);
  const crd = crds.find(
    (d) => (d?.spec as Json | undefined)?.names && ((d.spec as Json).names as Json).kind === kind,
  )!;
  const v1 = ((crd.spec as Json).versions as Json[]).find((v) => v.name === 'v1')!;
  const spec = ((v1.schema as Json).openAPIV3Schema as Schema).properties!.spec!;
  const out: string[] = [];
  const walk = (s: Schema, at: string) => {
    if (s.type === 'object' && s.properties)
      for (const [k, c] of Object.entries(s.properties)) walk(c, `${at}.${k}`);
    else if (s.type === 'array' && s.items) walk(s.items, `${at}[]`);
    else out.push(at);
  };
  walk(spec, 'spec');
  return out;
}
