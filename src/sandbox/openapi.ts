/**
 * The served part of the Kubernetes OpenAPI document: schema look-ups for strategic merge patch
 * and field pruning, and the OpenAPI v3 documents kubectl reads (it needs protobuf for v2).
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { ErrorCodes, NplError } from '../runtime/errors.ts';
import type { Json, JsonObject, SwaggerDoc } from './openapi-extract.ts';
import { gvPrefix } from './openapi-extract.ts';
import { encodeOpenApiV2 } from './openapi-v2-proto.ts';
import { isJsonObject } from './json.ts';

/** The `hash` query of an OpenAPI v3 document's URL, as the API server writes it: SHA-512, upper-case hex. */
export function v3DocHash(text: string): string {
  return createHash('sha512').update(text).digest('hex').toUpperCase();
}

export type { Json, JsonObject } from './openapi-extract.ts';

export type Schema = JsonObject;

const SPEC_URL = new URL('./openapi/kube-openapi.json', import.meta.url);

function loadBundledSpec(): SwaggerDoc {
  let text: string;
  try {
    text = readFileSync(SPEC_URL, 'utf8');
  } catch (err) {
    throw new NplError(
      ErrorCodes.SPEC_MISSING,
      `the bundled Kubernetes OpenAPI document is missing: ${SPEC_URL.pathname}`,
      {
        cause: err,
      },
    );
  }
  return JSON.parse(text) as SwaggerDoc;
}

export class OpenApi {
  readonly doc: SwaggerDoc;
  private readonly v3Cache = new Map<string, string>();
  private readonly v3Hashes = new Map<string, string>();
  private v2Proto: Buffer | undefined;

  constructor(doc?: SwaggerDoc) {
    this.doc = doc ?? loadBundledSpec();
  }

  /** The v2 document as protobuf (kubectl's client-side validation reads it), encoded once. */
  v2Protobuf(): Buffer {
    this.v2Proto ??= encodeOpenApiV2(this.doc);
    return this.v2Proto;
  }

  definition(name: string): Schema | undefined {
    return this.doc.definitions[name];
  }

  /** Follows `$ref` (and a lone `allOf: [{$ref}]`) to the schema it names. */
  resolve(node: Schema | undefined): Schema | undefined {
    let cur = node;
    for (let i = 0; cur && i < 8; i++) {
      const ref = cur.$ref;
      if (typeof ref === 'string') {
        cur = this.doc.definitions[ref.replace('#/definitions/', '')];
        continue;
      }
      const allOf = cur.allOf;
      if (Array.isArray(allOf) && allOf.length === 1 && isJsonObject(allOf[0])) {
        cur = allOf[0];
        continue;
      }
      return cur;
    }
    return cur;
  }

  property(node: Schema | undefined, key: string): Schema | undefined {
    const s = this.resolve(node);
    if (!s) return undefined;
    const props = s.properties;
    if (isJsonObject(props) && isJsonObject(props[key])) return props[key] as Schema;
    const extra = s.additionalProperties;
    if (isJsonObject(extra)) return extra;
    return undefined;
  }

  items(node: Schema | undefined): Schema | undefined {
    const s = this.resolve(node);
    return s && isJsonObject(s.items) ? s.items : undefined;
  }

  /** Root document of `/openapi/v3`: one entry per served group version. */
  v3Root(): JsonObject {
    const paths: JsonObject = {};
    for (const key of this.v3Keys()) {
      paths[key] = { serverRelativeURL: `/openapi/v3/${key}?hash=${this.v3Hash(key)}` };
    }
    return { paths };
  }

  v3Keys(): string[] {
    const keys = new Set<string>();
    for (const p of Object.keys(this.doc.paths)) {
      const m = /^\/(api\/v1|apis\/[^/]+\/[^/]+)\//.exec(p);
      if (m?.[1]) keys.add(m[1]);
    }
    return [...keys].sort();
  }

  /** Once per group version: the documents do not change (a char-by-char hash of each, on every
   * read of the root, was most of the sandbox's CPU under kubectl and helm). */
  private v3Hash(key: string): string {
    let h = this.v3Hashes.get(key);
    if (h === undefined) {
      h = v3DocHash(this.v3Doc(key) ?? '');
      this.v3Hashes.set(key, h);
    }
    return h;
  }

  /** The OpenAPI v3 document of one group version (`api/v1`, `apis/networking.k8s.io/v1`), as JSON text. */
  v3Doc(key: string): string | undefined {
    const cached = this.v3Cache.get(key);
    if (cached !== undefined) return cached;
    const [first, a, b] = key.split('/');
    const prefix = first === 'api' ? gvPrefix('', a ?? '') : gvPrefix(a ?? '', b ?? '');
    const paths: JsonObject = {};
    for (const [p, item] of Object.entries(this.doc.paths)) {
      if (p.startsWith(prefix)) paths[p] = convertPathItem(item, this.doc.parameters);
    }
    if (Object.keys(paths).length === 0) return undefined;
    const doc = {
      openapi: '3.0.0',
      info: this.doc.info ?? { title: 'Kubernetes', version: 'v1.35.0' },
      paths,
      components: { schemas: this.doc.definitions },
    };
    const text = JSON.stringify(doc).replaceAll('"#/definitions/', '"#/components/schemas/');
    this.v3Cache.set(key, text);
    return text;
  }
}

function resolveParam(p: Json, params: SwaggerDoc['parameters']): JsonObject | undefined {
  if (!isJsonObject(p)) return undefined;
  if (typeof p.$ref === 'string') return params[p.$ref.replace('#/parameters/', '')];
  return p;
}

const JSON_TYPES = ['application/json', 'application/yaml'];

/** Swagger 2 path item -> OpenAPI 3 path item: body parameters become requestBody, schemas move under content. */
function convertPathItem(item: JsonObject, params: SwaggerDoc['parameters']): JsonObject {
  const out: JsonObject = {};
  for (const [method, op0] of Object.entries(item)) {
    if (method === 'parameters' && Array.isArray(op0)) {
      out.parameters = op0.map((p) => convertParam(resolveParam(p, params))).filter((p) => p !== null);
      continue;
    }
    if (!isJsonObject(op0)) continue;
    const op: JsonObject = { ...op0 };
    const consumes = Array.isArray(op.consumes) ? (op.consumes as string[]) : JSON_TYPES;
    const produces = Array.isArray(op.produces) ? (op.produces as string[]) : JSON_TYPES;
    delete op.consumes;
    delete op.produces;
    delete op.schemes;
    const list = Array.isArray(op.parameters) ? op.parameters : [];
    const converted: Json[] = [];
    for (const raw of list) {
      const p = resolveParam(raw, params);
      if (!p) continue;
      if (p.in === 'body') {
        op.requestBody = {
          content: Object.fromEntries(consumes.map((c) => [c, { schema: p.schema ?? {} }])),
          required: p.required === true,
        };
        continue;
      }
      const c = convertParam(p);
      if (c) converted.push(c);
    }
    op.parameters = converted;
    if (isJsonObject(op.responses)) {
      const responses: JsonObject = {};
      for (const [code, r] of Object.entries(op.responses)) {
        if (!isJsonObject(r)) continue;
        const { schema, ...rest } = r;
        responses[code] = schema
          ? { ...rest, content: Object.fromEntries(produces.map((c) => [c, { schema }])) }
          : rest;
      }
      op.responses = responses;
    }
    out[method] = op;
  }
  return out;
}

function convertParam(p: JsonObject | undefined): JsonObject | null {
  if (!p) return null;
  const { type, uniqueItems, ...rest } = p;
  void uniqueItems;
  return { ...rest, schema: { type: type ?? 'string' } };
}
