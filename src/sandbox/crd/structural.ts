/**
 * A custom resource against its CRD's structural schema, as the apiextensions server treats it:
 * nulls and unknown fields pruned (unknown ones reported for `fieldValidation`), defaults filled,
 * then validated with apimachinery's messages (`spec.x: Invalid value: 0: spec.x in body should be
 * greater than or equal to 1`).
 */
import { isIP } from 'node:net';
import { isDeepStrictEqual } from 'node:util';
import type { Json, JsonObject } from '../openapi.ts';
import type { StatusCause } from '../status.ts';
import { isJsonObject } from '../json.ts';

export type Schema = JsonObject;

const schemaOf = (v: Json | undefined): Schema | undefined => (isJsonObject(v) ? v : undefined);

const join = (path: string, key: string): string => (path ? `${path}.${key}` : key);

function preserves(s: Schema): boolean {
  return s['x-kubernetes-preserve-unknown-fields'] === true;
}

/** The schema of an object's property, or of its additional properties. */
export function propertySchema(s: Schema | undefined, key: string): Schema | undefined {
  if (!s) return undefined;
  const props = schemaOf(s.properties);
  if (props && isJsonObject(props[key])) return props[key];
  return schemaOf(s.additionalProperties);
}

const ROOT_FIELDS = new Set(['apiVersion', 'kind', 'metadata']);

/**
 * Prunes in place what the schema does not declare, and nulls it does not allow; returns the
 * paths of the unknown fields dropped. `root` keeps apiVersion, kind and metadata.
 */
export function prune(value: Json, s: Schema | undefined, path = '', root = true): string[] {
  const unknown: string[] = [];
  const walk = (v: Json, node: Schema | undefined, p: string, top: boolean): void => {
    if (!node || node['x-kubernetes-int-or-string'] === true) return;
    if (Array.isArray(v)) {
      const items = schemaOf(node.items);
      v.forEach((e, i) => walk(e, items, `${p}[${i}]`, false));
      return;
    }
    if (!isJsonObject(v)) return;
    const props = schemaOf(node.properties);
    const extra = node.additionalProperties;
    const keepsMeta = top || node['x-kubernetes-embedded-resource'] === true;
    for (const [k, child] of Object.entries(v)) {
      if (keepsMeta && ROOT_FIELDS.has(k)) continue;
      const sub = props && isJsonObject(props[k]) ? props[k] : schemaOf(extra);
      if (child === null && !(sub?.nullable === true)) {
        delete v[k];
        continue;
      }
      if (sub) walk(child, sub, join(p, k), false);
      else if (!preserves(node) && extra !== true) {
        unknown.push(join(p, k));
        delete v[k];
      }
    }
  };
  walk(value, s, path, root);
  return unknown;
}

/** Fills `default`s in place where a property is absent (and, recursively, inside what it filled). */
export function applyDefaults(value: Json, s: Schema | undefined): void {
  if (!s) return;
  if (Array.isArray(value)) {
    const items = schemaOf(s.items);
    for (const e of value) applyDefaults(e, items);
    return;
  }
  if (!isJsonObject(value)) return;
  const props = schemaOf(s.properties);
  if (props) {
    for (const [k, sub] of Object.entries(props)) {
      if (!isJsonObject(sub)) continue;
      if (value[k] === undefined && sub.default !== undefined) value[k] = structuredClone(sub.default);
    }
  }
  for (const [k, child] of Object.entries(value)) applyDefaults(child, propertySchema(s, k));
}

function typeName(v: Json): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  if (typeof v === 'number') return Number.isInteger(v) ? 'integer' : 'number';
  return typeof v === 'object' ? 'object' : typeof v;
}

function typeMatches(type: string, v: Json): boolean {
  const actual = typeName(v);
  if (type === 'number') return actual === 'number' || actual === 'integer';
  return actual === type;
}

/** Go's %v of a value, as apimachinery prints it in `Invalid value:` (strings quoted, numbers bare). */
function shown(v: Json): string {
  if (typeof v === 'string') return JSON.stringify(v);
  if (isJsonObject(v)) return `"object"`;
  if (Array.isArray(v)) return `"array"`;
  return String(v);
}

const invalid = (path: string, v: Json, detail: string): StatusCause => ({
  reason: 'FieldValueInvalid',
  message: `Invalid value: ${shown(v)}: ${detail}`,
  field: path,
});

/** Schema patterns compiled once (a CRD's schema is read on every write of its kinds). */
const patterns = new Map<string, RegExp>();
function patternOf(source: string): RegExp {
  let re = patterns.get(source);
  if (!re) patterns.set(source, (re = new RegExp(source, 'u')));
  return re;
}

/** A value of the wrong JSON type: the one kind of error that stops the CEL rules from running. */
export const TYPE_INVALID = 'FieldValueTypeInvalid';
const typeInvalid = (path: string, type: string, detail: string): StatusCause => ({
  reason: TYPE_INVALID,
  message: `Invalid value: "${type}": ${detail}`,
  field: path,
});

const DATE_TIME = /^\d{4}-\d\d-\d\d[Tt ]\d\d:\d\d:\d\d(\.\d+)?([Zz]|[+-]\d\d:\d\d)$/;

function formatError(format: string, v: string): boolean {
  switch (format) {
    case 'ipv4':
      return isIP(v) !== 4;
    case 'ipv6':
      return isIP(v) !== 6;
    case 'date-time':
      return !DATE_TIME.test(v) || Number.isNaN(Date.parse(v));
    default:
      return false;
  }
}

/** The key of an item of a `x-kubernetes-list-type: map` list, as Go prints it in Duplicate value. */
function mapKeyText(item: JsonObject, keys: string[]): string {
  const parts = keys.filter((k) => item[k] !== undefined).map((k) => `"${k}":${JSON.stringify(item[k])}`);
  return `map[string]interface {}{${parts.join(', ')}}`;
}

function validateList(v: Json[], s: Schema, path: string, out: StatusCause[]): void {
  const listType = s['x-kubernetes-list-type'];
  if (listType === 'set') {
    v.forEach((e, i) => {
      if (v.findIndex((o) => isDeepStrictEqual(o, e)) < i)
        out.push({
          reason: 'FieldValueDuplicate',
          message: `Duplicate value: ${shown(e)}`,
          field: `${path}[${i}]`,
        });
    });
  }
  const keys = s['x-kubernetes-list-map-keys'];
  if (listType === 'map' && Array.isArray(keys)) {
    const names = keys.filter((k): k is string => typeof k === 'string');
    const seen: JsonObject[] = [];
    v.forEach((e, i) => {
      if (!isJsonObject(e)) return;
      if (seen.some((o) => names.every((k) => isDeepStrictEqual(o[k], e[k])))) {
        out.push({
          reason: 'FieldValueDuplicate',
          message: `Duplicate value: ${mapKeyText(e, names)}`,
          field: `${path}[${i}]`,
        });
      }
      seen.push(e);
    });
  }
}

/** Validates a value against a schema node; the causes say what the API server would say. */
export function validate(
  v: Json,
  s: Schema | undefined,
  path: string,
  out: StatusCause[] = [],
): StatusCause[] {
  if (!s) return out;
  const where = path || '<root>';
  if (s['x-kubernetes-int-or-string'] === true) {
    if (typeof v !== 'string' && !(typeof v === 'number' && Number.isInteger(v)))
      out.push(
        typeInvalid(
          path,
          typeName(v),
          `${where} in body must be of type integer-or-string: "${typeName(v)}"`,
        ),
      );
    return out;
  }
  const type = typeof s.type === 'string' ? s.type : undefined;
  if (v === null) {
    if (s.nullable !== true && type)
      out.push(typeInvalid(path, 'null', `${where} in body must be of type ${type}: "null"`));
    return out;
  }
  if (type && !typeMatches(type, v)) {
    out.push(typeInvalid(path, typeName(v), `${where} in body must be of type ${type}: "${typeName(v)}"`));
    return out;
  }
  if (Array.isArray(s.enum) && !s.enum.some((e) => isDeepStrictEqual(e, v))) {
    out.push({
      reason: 'FieldValueNotSupported',
      message: `Unsupported value: ${shown(v)}: supported values: ${s.enum.map((e) => JSON.stringify(e)).join(', ')}`,
      field: path,
    });
  }
  if (typeof v === 'string') {
    if (typeof s.maxLength === 'number' && [...v].length > s.maxLength)
      out.push({
        reason: 'FieldValueTooLong',
        message: `Too long: may not be more than ${s.maxLength} bytes`,
        field: path,
      });
    if (typeof s.minLength === 'number' && [...v].length < s.minLength)
      out.push(invalid(path, v, `${where} in body should be at least ${s.minLength} chars long`));
    if (typeof s.pattern === 'string' && !patternOf(s.pattern).test(v))
      out.push(invalid(path, v, `${where} in body should match '${s.pattern}'`));
    if (typeof s.format === 'string' && formatError(s.format, v))
      out.push(invalid(path, v, `${where} in body must be of type ${s.format}: ${JSON.stringify(v)}`));
  }
  if (typeof v === 'number') {
    if (typeof s.minimum === 'number' && (s.exclusiveMinimum === true ? v <= s.minimum : v < s.minimum))
      out.push(
        invalid(
          path,
          v,
          `${where} in body should be greater than ${s.exclusiveMinimum === true ? '' : 'or equal to '}${s.minimum}`,
        ),
      );
    if (typeof s.maximum === 'number' && (s.exclusiveMaximum === true ? v >= s.maximum : v > s.maximum))
      out.push(
        invalid(
          path,
          v,
          `${where} in body should be less than ${s.exclusiveMaximum === true ? '' : 'or equal to '}${s.maximum}`,
        ),
      );
  }
  if (Array.isArray(v)) {
    if (typeof s.maxItems === 'number' && v.length > s.maxItems)
      out.push({
        reason: 'FieldValueTooMany',
        message: `Too many: ${v.length}: must have at most ${s.maxItems} items`,
        field: path,
      });
    if (typeof s.minItems === 'number' && v.length < s.minItems)
      out.push(invalid(path, v.length, `${where} in body should have at least ${s.minItems} items`));
    validateList(v, s, path, out);
    const items = schemaOf(s.items);
    v.forEach((e, i) => validate(e, items, `${path}[${i}]`, out));
  }
  if (isJsonObject(v)) {
    const n = Object.keys(v).length;
    if (typeof s.maxProperties === 'number' && n > s.maxProperties)
      out.push({
        reason: 'FieldValueTooMany',
        message: `Too many: ${n}: must have at most ${s.maxProperties} items`,
        field: path,
      });
    if (typeof s.minProperties === 'number' && n < s.minProperties)
      out.push(invalid(path, n, `${where} in body should have at least ${s.minProperties} properties`));
    for (const r of Array.isArray(s.required) ? s.required : []) {
      if (typeof r === 'string' && v[r] === undefined)
        out.push({ reason: 'FieldValueRequired', message: 'Required value', field: join(path, r) });
    }
    const props = schemaOf(s.properties);
    for (const [k, child] of Object.entries(v)) {
      if (path === '' && ROOT_FIELDS.has(k)) continue;
      const sub = props && isJsonObject(props[k]) ? props[k] : schemaOf(s.additionalProperties);
      validate(child, sub, join(path, k), out);
    }
  }
  validateCombinators(v, s, path, where, out);
  return out;
}

/** allOf / anyOf / oneOf / not: value validations only (a structural schema carries no types there). */
function validateCombinators(v: Json, s: Schema, path: string, where: string, out: StatusCause[]): void {
  const fails = (sub: Json): boolean => isJsonObject(sub) && validate(v, sub, path, []).length > 0;
  if (Array.isArray(s.allOf)) for (const sub of s.allOf) if (isJsonObject(sub)) validate(v, sub, path, out);
  if (Array.isArray(s.anyOf) && s.anyOf.length > 0 && s.anyOf.every(fails)) {
    const first = s.anyOf.find(isJsonObject);
    if (first) validate(v, first, path, out);
  }
  if (Array.isArray(s.oneOf) && s.oneOf.length > 0) {
    const passing = s.oneOf.filter((sub) => !fails(sub)).length;
    if (passing !== 1) {
      const first = s.oneOf.find(isJsonObject);
      if (passing === 0 && first) validate(v, first, path, out);
      else out.push(invalid(path, v, `${where} in body must validate one and only one schema (oneOf)`));
    }
  }
  if (isJsonObject(s.not) && !fails(s.not))
    out.push(invalid(path, v, `${where} in body should not be valid against the schema (not)`));
}
