/**
 * Holds Data Plane API exchanges to the official specs (bundled in test/support/specs/haproxy): the operation
 * must exist for the method and path, query parameters must be declared, the request body must
 * match the body parameter's schema, and the response body the schema of its status (or default),
 * with ajv over the swagger document itself.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Ajv, type ValidateFunction } from 'ajv';
import { parse } from 'yaml';
import type { Exchange } from '../../sim/haproxy-dataplane/simulator.ts';
import { ROOT } from './cli-process.ts';

interface Param {
  name: string;
  in: string;
  $ref?: string;
  schema?: unknown;
}
interface Operation {
  parameters?: Param[];
  responses: Record<string, { $ref?: string; schema?: unknown; headers?: Record<string, unknown> }>;
}
interface SwaggerDoc {
  basePath: string;
  paths: Record<string, Record<string, Operation | Param[]>>;
  parameters: Record<string, Param>;
  responses: Record<string, { schema?: unknown; headers?: Record<string, unknown> }>;
}

type Json = Record<string, unknown>;

/**
 * go-swagger merges `allOf` members into one object; JSON Schema does not, so an
 * `additionalProperties: false` next to an `allOf` would refuse every property. Merge them first.
 */
function flattenAllOf(node: unknown, doc: SwaggerDoc): void {
  if (Array.isArray(node)) return node.forEach((n) => flattenAllOf(n, doc));
  if (!node || typeof node !== 'object') return;
  const o = node as Json;
  for (const v of Object.values(o)) flattenAllOf(v, doc);
  if (!Array.isArray(o.allOf)) return;
  const parts = (o.allOf as Json[]).map((p) =>
    typeof p.$ref === 'string' && p.$ref.startsWith('#/definitions/')
      ? ((doc as unknown as { definitions: Record<string, Json> }).definitions[p.$ref.split('/').pop()!] ??
        {})
      : p,
  );
  if (parts.some((p) => Array.isArray(p.allOf))) parts.forEach((p) => flattenAllOf(p, doc));
  const properties: Json = { ...(o.properties as Json | undefined) };
  const required = new Set<string>((o.required as string[] | undefined) ?? []);
  for (const p of parts) {
    Object.assign(properties, p.properties as Json | undefined);
    for (const r of (p.required as string[] | undefined) ?? []) required.add(r);
  }
  delete o.allOf;
  o.type = 'object';
  o.properties = properties;
  if (required.size > 0) o.required = [...required];
}

const pointer = (...parts: string[]) =>
  `#/${parts.map((p) => p.replace(/~/g, '~0').replace(/\//g, '~1')).join('/')}`;

/** The official Data Plane API spec, bundled with the tests (a copy of shared/specs/haproxy). */
export const bundledSpecPath = (version: 'v2' | 'v3'): string =>
  join(ROOT, 'test', 'support', 'specs', 'haproxy', `dataplaneapi-${version}.yaml`);

export class DataplaneSpec {
  private readonly doc: SwaggerDoc;
  private readonly ajv = new Ajv({
    strict: false,
    validateFormats: false,
    allErrors: false,
    inlineRefs: false,
  });
  private readonly cache = new Map<string, ValidateFunction>();
  private readonly routes: { re: RegExp; template: string }[];

  constructor(readonly version: 'v2' | 'v3') {
    const file = bundledSpecPath(version);
    // npm test's build writes each spec as JSON beside it (scripts/pretest.mjs): the same document,
    // read in milliseconds instead of a YAML parse of most of a second in each test process.
    const json = file.replace(/\.yaml$/, '.json');
    this.doc = (
      existsSync(json) ? JSON.parse(readFileSync(json, 'utf8')) : parse(readFileSync(file, 'utf8'))
    ) as SwaggerDoc;
    flattenAllOf(this.doc, this.doc);
    this.ajv.addSchema(this.doc as object, 'spec');
    this.routes = Object.keys(this.doc.paths).map((template) => ({
      template,
      re: new RegExp(`^${template.replace(/\{[^}]+\}/g, '[^/]+')}$`),
    }));
  }

  private validator(ptr: string): ValidateFunction {
    let v = this.cache.get(ptr);
    if (!v) {
      v = this.ajv.compile({ $ref: `spec${ptr}` });
      this.cache.set(ptr, v);
    }
    return v;
  }

  /** Problems with one exchange ([] when it is what the spec describes). */
  check(x: Exchange): string[] {
    const where = `${x.method} ${x.path}`;
    if (!x.path.startsWith(this.doc.basePath)) return [`${where}: not under ${this.doc.basePath}`];
    const path = x.path.slice(this.doc.basePath.length);
    // A literal path wins over a templated one (/backends/x vs /backends/{name}).
    const route = this.routes.find((r) => r.template === path) ?? this.routes.find((r) => r.re.test(path));
    if (!route) return [`${where}: no such path in the ${this.version} spec`];
    const method = x.method.toLowerCase();
    const ops = this.doc.paths[route.template]!;
    const op = ops[method] as Operation | undefined;
    if (!op) return [`${where}: ${x.method} is not an operation of ${route.template}`];
    const problems: string[] = [];
    const shared = (Array.isArray(ops.parameters) ? ops.parameters : []) as Param[];
    const params = [...shared, ...(op.parameters ?? [])].map((p) =>
      p.$ref ? this.doc.parameters[p.$ref.split('/').pop()!]! : p,
    );
    for (const q of Object.keys(x.query)) {
      if (!params.some((p) => p.in === 'query' && p.name === q)) {
        problems.push(`${where}: query parameter ${q} is not declared`);
      }
    }
    for (const field of Object.keys(x.form ?? {})) {
      if (!params.some((p) => p.in === 'formData' && p.name === field)) {
        problems.push(`${where}: form field ${field} is not declared`);
      }
    }
    const bodyIndex = (op.parameters ?? []).findIndex((p) => !p.$ref && p.in === 'body');
    if (x.requestBody !== undefined) {
      if (bodyIndex < 0) problems.push(`${where}: the operation takes no body`);
      else {
        const v = this.validator(
          pointer('paths', route.template, method, 'parameters', String(bodyIndex), 'schema'),
        );
        if (!v(x.requestBody)) problems.push(`${where}: request body: ${this.ajv.errorsText(v.errors)}`);
      }
    }
    const status = String(x.status);
    const declared = op.responses[status] ? status : op.responses.default ? 'default' : undefined;
    if (!declared) return [...problems, `${where}: status ${status} is not declared`];
    const r = op.responses[declared]!;
    let ptr = pointer('paths', route.template, method, 'responses', declared, 'schema');
    let schema = r.schema;
    let headers = r.headers;
    if (r.$ref) {
      const name = r.$ref.split('/').pop()!;
      schema = this.doc.responses[name]?.schema;
      headers = this.doc.responses[name]?.headers;
      ptr = pointer('responses', name, 'schema');
    }
    if ((schema as { type?: string } | undefined)?.type === 'file') {
      // A file's contents, as they are.
      if (typeof x.responseBody !== 'string') problems.push(`${where}: ${status} should be a file`);
    } else if (schema !== undefined && x.responseBody !== undefined) {
      const v = this.validator(ptr);
      if (!v(x.responseBody)) problems.push(`${where}: ${status} body: ${this.ajv.errorsText(v.errors)}`);
    }
    if (schema !== undefined && x.responseBody === undefined && x.status < 300) {
      problems.push(`${where}: ${status} should have a body`);
    }
    for (const h of Object.keys(x.headers)) {
      if (h === 'www-authenticate') continue;
      const known = Object.keys(headers ?? {}).map((k) => k.toLowerCase());
      if (!known.includes(h)) problems.push(`${where}: header ${h} is not declared for ${status}`);
    }
    return problems;
  }
}
