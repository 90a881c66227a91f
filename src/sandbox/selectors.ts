/**
 * Label and field selectors with the grammar and error messages of apimachinery's `labels.Parse`
 * and `fields.ParseSelector`.
 */
import { badRequest } from './status.ts';

export type LabelRequirement =
  | { key: string; op: 'eq' | 'neq'; value: string }
  | { key: string; op: 'in' | 'notin'; values: string[] }
  | { key: string; op: 'exists' | 'notexists' };

export type LabelSelector = LabelRequirement[];

const QUALIFIED_NAME = /^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$/;
const LABEL_VALUE = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;

function checkKey(key: string): void {
  const slash = key.lastIndexOf('/');
  const name = slash >= 0 ? key.slice(slash + 1) : key;
  if (!name || name.length > 63 || !QUALIFIED_NAME.test(name) || (slash >= 0 && !key.slice(0, slash))) {
    throw badRequest(
      `unable to parse requirement: <nil>: Invalid value: "${key}": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character`,
    );
  }
}

function checkValue(value: string): void {
  if (value.length > 63 || !LABEL_VALUE.test(value)) {
    throw badRequest(
      `unable to parse requirement: values[0]: Invalid value: "${value}": a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character`,
    );
  }
}

/** Splits on commas that are not inside a `(...)` set. */
function splitTopLevel(s: string): string[] {
  const out: string[] = [];
  let depth = 0;
  let cur = '';
  for (const ch of s) {
    if (ch === '(') depth++;
    if (ch === ')') depth--;
    if (ch === ',' && depth === 0) {
      out.push(cur);
      cur = '';
    } else cur += ch;
  }
  out.push(cur);
  return out;
}

export function parseLabelSelector(raw: string | null | undefined): LabelSelector {
  const text = (raw ?? '').trim();
  if (!text) return [];
  const reqs: LabelSelector = [];
  for (const part0 of splitTopLevel(text)) {
    const part = part0.trim();
    if (!part) throw badRequest(`unable to parse requirement: found '', expected: identifier`);
    const set = /^(\S+?)\s+(in|notin)\s*\(([^)]*)\)$/.exec(part);
    if (set) {
      const key = set[1]!;
      checkKey(key);
      const values = set[3]!
        .split(',')
        .map((v) => v.trim())
        .filter((v, _i, all) => v !== '' || all.length === 1);
      for (const v of values) checkValue(v);
      reqs.push({ key, op: set[2] === 'in' ? 'in' : 'notin', values });
      continue;
    }
    const cmp = /^([^=!\s]+)\s*(==|=|!=)\s*(.*)$/.exec(part);
    if (cmp) {
      const key = cmp[1]!;
      const value = cmp[3]!.trim();
      checkKey(key);
      checkValue(value);
      reqs.push({ key, op: cmp[2] === '!=' ? 'neq' : 'eq', value });
      continue;
    }
    if (part.startsWith('!')) {
      const key = part.slice(1).trim();
      checkKey(key);
      reqs.push({ key, op: 'notexists' });
      continue;
    }
    if (/\s/.test(part) || /[()]/.test(part)) {
      throw badRequest(
        `unable to parse requirement: found '${part}', expected: in, notin, =, ==, !=, gt, lt`,
      );
    }
    checkKey(part);
    reqs.push({ key: part, op: 'exists' });
  }
  return reqs;
}

export function matchLabels(sel: LabelSelector, labels: Record<string, string> | undefined): boolean {
  for (const r of sel) {
    const has = labels !== undefined && Object.hasOwn(labels, r.key);
    const v = has ? labels[r.key] : undefined;
    switch (r.op) {
      case 'eq':
        if (v !== r.value) return false;
        break;
      case 'neq':
        if (v === r.value) return false;
        break;
      case 'in':
        if (v === undefined || !r.values.includes(v)) return false;
        break;
      case 'notin':
        if (v !== undefined && r.values.includes(v)) return false;
        break;
      case 'exists':
        if (!has) return false;
        break;
      case 'notexists':
        if (has) return false;
        break;
    }
  }
  return true;
}

export interface FieldRequirement {
  field: string;
  op: 'eq' | 'neq';
  value: string;
}

export type FieldSelector = FieldRequirement[];

/** Parses `a=b,c!=d`, checking every field against what the resource supports. */
export function parseFieldSelector(
  raw: string | null | undefined,
  supported: readonly string[],
): FieldSelector {
  const text = (raw ?? '').trim();
  if (!text) return [];
  const out: FieldSelector = [];
  for (const part0 of text.split(',')) {
    const part = part0.trim();
    const m = /^([^=!]+)(==|=|!=)(.*)$/.exec(part);
    if (!m) throw badRequest(`invalid selector: '${text}'; can't understand '${part}'`);
    const field = m[1]!.trim();
    if (!supported.includes(field)) throw badRequest(`field label not supported: ${field}`);
    out.push({ field, op: m[2] === '!=' ? 'neq' : 'eq', value: m[3]!.trim() });
  }
  return out;
}

export function matchFields(sel: FieldSelector, fields: (name: string) => string): boolean {
  for (const r of sel) {
    const v = fields(r.field);
    if (r.op === 'eq' ? v !== r.value : v === r.value) return false;
  }
  return true;
}

/** Reads a dotted path (`spec.nodeName`) as the field selector string value ('' when absent). */
export function fieldValue(obj: unknown, path: string): string {
  let cur: unknown = obj;
  for (const seg of path.split('.')) {
    if (cur === null || typeof cur !== 'object') return '';
    cur = (cur as Record<string, unknown>)[seg];
  }
  if (cur === undefined || cur === null) return '';
  return typeof cur === 'string' ? cur : String(cur);
}
