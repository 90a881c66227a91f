/**
 * `x-kubernetes-validations` rules of a CRD's schema, evaluated with @bufbuild/cel (conformance-
 * tested against cel-spec, RE2 regular expressions like Kubernetes' own) the way the apiextensions
 * server does: `self` is the value at the rule's node (integers as CEL ints), `oldSelf` the
 * correlated old value on update (a transition rule is skipped where there is none), a failure is
 * a cause on the node's path (plus the rule's `fieldPath`) with the rule's message or `failed rule:
 * <rule>`. The strings extension and Kubernetes' `isIP` are provided; a rule calling a function
 * the evaluator lacks is reported once when its CRD is read, and skipped. The library is loaded on
 * the first rule, so a sandbox without CRDs does not pay for it.
 */
import { createRequire } from 'node:module';
import { isIP } from 'node:net';
import type * as Cel from '@bufbuild/cel';
import type * as CelExt from '@bufbuild/cel/ext';
import type { Json, JsonObject } from '../openapi.ts';
import type { StatusCause } from '../status.ts';
import { propertySchema, type Schema } from './structural.ts';
import { isJsonObject } from '../json.ts';

type Compiled = (ctx: Record<string, unknown>) => unknown;

export interface SkippedRule {
  rule: string;
  reason: string;
}

interface Runtime {
  cel: typeof Cel;
  env: Cel.CelEnv;
}

let runtime: Runtime | undefined;
const compiled = new Map<string, Compiled | SkippedRule>();

function celRuntime(): Runtime {
  if (runtime) return runtime;
  const require = createRequire(import.meta.url);
  const cel = require('@bufbuild/cel') as typeof Cel;
  const ext = require('@bufbuild/cel/ext') as typeof CelExt;
  const isIPFunc = cel.celFunc('isIP', [cel.CelScalar.STRING], cel.CelScalar.BOOL, (s) => isIP(s) !== 0);
  // Kubernetes' isCIDR (1.31): an address, a slash, a prefix length within its family's bits.
  const isCIDRFunc = cel.celFunc('isCIDR', [cel.CelScalar.STRING], cel.CelScalar.BOOL, (s) => {
    const [ip = '', bits = '', ...rest] = s.split('/');
    const family = isIP(ip);
    return (
      rest.length === 0 &&
      family !== 0 &&
      /^(0|[1-9]\d{0,2})$/.test(bits) &&
      Number(bits) <= (family === 4 ? 32 : 128)
    );
  });
  runtime = { cel, env: cel.celEnv({ funcs: [...ext.strings, isIPFunc, isCIDRFunc] }) };
  return runtime;
}

/** Names of the functions an expression calls (operators and macro internals left out). */
function calledFunctions(node: unknown, out: Set<string>): Set<string> {
  if (Array.isArray(node)) for (const n of node) calledFunctions(n, out);
  else if (node && typeof node === 'object') {
    const n = node as { case?: unknown; value?: { function?: unknown } };
    if (n.case === 'callExpr' && typeof n.value?.function === 'string' && /^[A-Za-z]/.test(n.value.function))
      out.add(n.value.function);
    for (const v of Object.values(node)) if (typeof v === 'object') calledFunctions(v, out);
  }
  return out;
}

/** The compiled rule, or why it is skipped (a function the evaluator lacks, a syntax it refuses). */
export function compileRule(rule: string): Compiled | SkippedRule {
  const known = compiled.get(rule);
  if (known) return known;
  let out: Compiled | SkippedRule;
  try {
    const { cel, env } = celRuntime();
    const parsed = cel.parse(rule);
    const missing = [...calledFunctions(parsed.expr, new Set())].filter((f) => !env.funcs.find(f));
    if (missing.length > 0) out = { rule, reason: `unknown function: ${missing.join(', ')}` };
    else {
      const fn = cel.plan(env, parsed);
      out = (ctx) => {
        const r = fn(ctx as Parameters<typeof fn>[0]);
        if (cel.isCelError(r)) throw new Error(r.message);
        return r;
      };
    }
  } catch (err) {
    out = { rule, reason: (err instanceof Error ? err.message : String(err)).split('\n')[0] ?? '' };
  }
  compiled.set(rule, out);
  return out;
}

/** Every rule in a schema that cannot run here. */
export function skippedRules(schema: Json | undefined): SkippedRule[] {
  const out: SkippedRule[] = [];
  const walk = (n: Json | undefined): void => {
    if (Array.isArray(n)) n.forEach(walk);
    else if (isJsonObject(n)) {
      for (const r of Array.isArray(n['x-kubernetes-validations']) ? n['x-kubernetes-validations'] : []) {
        if (isJsonObject(r) && typeof r.rule === 'string') {
          const c = compileRule(r.rule);
          if (typeof c !== 'function') out.push(c);
        }
      }
      for (const v of Object.values(n)) walk(v);
    }
  };
  walk(schema);
  return out;
}

/** JSON -> CEL input: integers of `type: integer` become bigint (CEL int). */
function toCel(v: Json, s: Schema | undefined): unknown {
  if (typeof v === 'number') return s?.type === 'integer' && Number.isInteger(v) ? BigInt(v) : v;
  if (Array.isArray(v)) {
    const items = isJsonObject(s?.items) ? s.items : undefined;
    return v.map((e) => toCel(e, items));
  }
  if (isJsonObject(v)) {
    const out: Record<string, unknown> = {};
    for (const [k, e] of Object.entries(v)) out[k] = toCel(e, propertySchema(s, k));
    return out;
  }
  return v;
}

const REASONS: Record<string, [StatusCause['reason'], (m: string) => string]> = {
  FieldValueRequired: ['FieldValueRequired', (m) => `Required value: ${m}`],
  FieldValueForbidden: ['FieldValueForbidden', (m) => `Forbidden: ${m}`],
  FieldValueDuplicate: ['FieldValueDuplicate', (m) => `Duplicate value: ${m}`],
};

function failure(rule: JsonObject, s: Schema, path: string): StatusCause {
  const message =
    typeof rule.message === 'string' && rule.message.trim()
      ? rule.message.trim()
      : `failed rule: ${String(rule.rule)}`;
  const fieldPath = typeof rule.fieldPath === 'string' ? rule.fieldPath : '';
  const field = `${path}${fieldPath}` || '<nil>';
  const mapped = typeof rule.reason === 'string' ? REASONS[rule.reason] : undefined;
  if (mapped) return { reason: mapped[0], message: mapped[1](message), field };
  const type = typeof s.type === 'string' ? s.type : 'object';
  return { reason: 'FieldValueInvalid', message: `Invalid value: "${type}": ${message}`, field };
}

function runRules(self: unknown, old: unknown, s: Schema, path: string, out: StatusCause[]): void {
  for (const r of Array.isArray(s['x-kubernetes-validations']) ? s['x-kubernetes-validations'] : []) {
    if (!isJsonObject(r) || typeof r.rule !== 'string') continue;
    const transition = /\boldSelf\b/.test(r.rule);
    if (transition && old === undefined && r.optionalOldSelf !== true) continue;
    const fn = compileRule(r.rule);
    if (typeof fn !== 'function') continue;
    let ok: unknown;
    try {
      ok = fn(transition ? { self, oldSelf: old } : { self });
    } catch {
      ok = false;
    }
    if (ok !== true) out.push(failure(r, s, path));
  }
}

function walk(v: unknown, old: unknown, s: Schema | undefined, path: string, out: StatusCause[]): void {
  if (!s || v === null || v === undefined) return;
  runRules(v, old, s, path, out);
  if (Array.isArray(v)) {
    const items = isJsonObject(s.items) ? s.items : undefined;
    const keys =
      s['x-kubernetes-list-type'] === 'map' && Array.isArray(s['x-kubernetes-list-map-keys'])
        ? s['x-kubernetes-list-map-keys'].filter((k): k is string => typeof k === 'string')
        : undefined;
    const olds = Array.isArray(old) ? (old as Record<string, unknown>[]) : [];
    v.forEach((e, i) => {
      const item = e as Record<string, unknown>;
      const prev = keys
        ? olds.find((o) => keys.every((k) => String(o?.[k]) === String(item?.[k])))
        : undefined;
      walk(e, prev, items, `${path}[${i}]`, out);
    });
    return;
  }
  if (typeof v === 'object') {
    const oldObj =
      typeof old === 'object' && old !== null && !Array.isArray(old)
        ? (old as Record<string, unknown>)
        : undefined;
    for (const [k, e] of Object.entries(v as Record<string, unknown>)) {
      walk(e, oldObj?.[k], propertySchema(s, k), path ? `${path}.${k}` : k, out);
    }
  }
}

/** Evaluates every rule of the schema over a (pruned, defaulted, valid) object. */
export function validateRules(obj: JsonObject, old: JsonObject | undefined, schema: Schema): StatusCause[] {
  const out: StatusCause[] = [];
  walk(toCel(obj, schema), old === undefined ? undefined : toCel(old, schema), schema, '', out);
  return out;
}
