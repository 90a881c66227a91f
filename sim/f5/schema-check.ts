/**
 * The BIG-IP simulator's check of a posted declaration against F5's published AS3 schema (the
 * bundled file, as F5 ships it), with a validator of its own: the adapter's pre-flight check and
 * this one are separate code, so a mistake in one is not the other's. The `f5*` formats are
 * written from AS3's documentation: an IP address with an optional `%route-domain` and `/prefix`
 * (f5ip), a BIG-IP path such as /Common/tcp (f5bigip), a pointer without white space (f5pointer);
 * f5PostProcess is work AS3 does on the device and checks nothing here.
 */
import { readFileSync } from 'node:fs';
import { isIPv4, isIPv6 } from 'node:net';
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';

/** The AS3 release whose schema the simulator holds declarations to. */
export const SIM_AS3_VERSION = '3.56.0';
const SCHEMA = new URL(`../../adapters/f5/schema/as3-schema-${SIM_AS3_VERSION}.json`, import.meta.url);

function f5ip(value: string): boolean {
  const [host = '', prefix] = value.split('/', 2) as [string, string | undefined];
  const address = host.replace(/%\d+$/, '');
  const v4 = isIPv4(address);
  if (!v4 && !isIPv6(address)) return false;
  if (prefix === undefined) return true;
  if (!/^\d{1,3}$/.test(prefix)) return false;
  return Number(prefix) <= (v4 ? 32 : 128);
}

let validate: ValidateFunction | undefined;

function validator(): ValidateFunction {
  if (validate) return validate;
  const ajv = new Ajv({ strict: false, allErrors: false });
  (addFormatsModule as unknown as (a: Ajv) => Ajv)(ajv);
  ajv.addKeyword({ keyword: 'f5PostProcess' });
  ajv.addFormat('f5ip', f5ip);
  ajv.addFormat('f5bigip', (v: string) => v.startsWith('/') && !/\s|\/\//.test(v) && !v.endsWith('/'));
  ajv.addFormat('f5pointer', (v: string) => v.length > 0 && !/\s/.test(v));
  validate = ajv.compile(JSON.parse(readFileSync(SCHEMA, 'utf8')) as object);
  return validate;
}

/** What AS3 answers a declaration the schema refuses: one line per problem, deepest first. */
export function schemaProblems(body: unknown): string[] {
  const v = validator();
  if (v(body)) return [];
  const depth = (e: ErrorObject) => e.instancePath.split('/').length;
  const errors = [...(v.errors ?? [])].sort((a, b) => depth(b) - depth(a));
  const deepest = depth(errors[0]!);
  return errors
    .filter((e) => depth(e) === deepest || depth(e) > 2)
    .map((e) => {
      const extra = e.keyword === 'additionalProperties' ? `: ${String(e.params.additionalProperty)}` : '';
      return `${e.instancePath.replace(/^\/declaration/, '') || '/'}: ${e.message ?? 'invalid'}${extra}`;
    });
}
