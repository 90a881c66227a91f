/**
 * AS3 declarations checked against F5's published schema (3.56.0, bundled as it is) before they
 * leave: the adapter never posts what AS3 would reject. (The BIG-IP simulator checks with a
 * validator of its own, sim/f5/schema-check.ts, so a mistake in one is not the other's.) F5's own formats are real checks; `f5PostProcess` (work AS3 does on the device,
 * such as resolving pointers) is a no-op keyword here.
 */
import { readFileSync } from 'node:fs';
import { isIP } from 'node:net';
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';

export const AS3_SCHEMA_VERSION = '3.56.0';
const SCHEMA_URL = new URL('./schema/as3-schema-3.56.0.json', import.meta.url);

/** An IP with an optional %route-domain and /prefix, as AS3's f5ip format takes it. */
export function isF5Ip(value: string): boolean {
  const m = /^([^%/]+)(%\d+)?(\/\d{1,3})?$/.exec(value);
  if (!m) return false;
  const family = isIP(m[1]!);
  if (family === 0) return false;
  if (m[3] === undefined) return true;
  return Number(m[3].slice(1)) <= (family === 4 ? 32 : 128);
}

let compiled: ValidateFunction | undefined;

function validator(): ValidateFunction {
  if (compiled) return compiled;
  const schema = JSON.parse(readFileSync(SCHEMA_URL, 'utf8')) as object;
  const ajv = new Ajv({ strict: false, allErrors: false });
  (addFormatsModule as unknown as (a: Ajv) => Ajv)(ajv);
  ajv.addKeyword({ keyword: 'f5PostProcess' });
  ajv.addFormat('f5ip', isF5Ip);
  // A BIG-IP pathname such as /Common/tcp.
  ajv.addFormat('f5bigip', /^\/[^\s/]+(\/[^\s/]+)*$/);
  // An AS3 pointer: a name, a path within the declaration, or a JSON pointer.
  ajv.addFormat('f5pointer', /^[^\s]+$/);
  compiled = ajv.compile(schema);
  return compiled;
}

/**
 * Compiles the validator now if it is not yet (the first validateAs3 would). The adapter calls it
 * before its reads: compiling (a second or two of CPU, once a process) between a pass's read and
 * its declaration blocked the process so long that the POST went out on a kept-alive connection
 * whose idle timeout had passed meanwhile (ECONNRESET, and a write is not retried); a read that
 * meets one is retried on a fresh connection.
 */
export function warmAs3Validator(): void {
  validator();
}

export interface As3Problem {
  /** JSON pointer into the request body, e.g. /declaration/t1/app/pool1/members/0/servicePort */
  path: string;
  message: string;
}

/**
 * Validates a request body (AS3 or ADC class); the problems, or none. The body is one of several
 * request kinds (a oneOf), so the errors of the kinds it is not come along; the deepest come first,
 * as they name the object and field at fault.
 */
export function validateAs3(body: unknown): As3Problem[] {
  const v = validator();
  if (v(body)) return [];
  const depth = (e: ErrorObject) => e.instancePath.split('/').length;
  return [...(v.errors ?? [])]
    .sort((a, b) => depth(b) - depth(a))
    .filter((e, i, all) => depth(e) === depth(all[0]!) || e.instancePath.split('/').length > 2)
    .map((e) => ({
      path: e.instancePath || '/',
      message: `${e.message ?? 'invalid'}${e.keyword === 'additionalProperties' ? `: ${String(e.params.additionalProperty)}` : ''}`,
    }));
}
