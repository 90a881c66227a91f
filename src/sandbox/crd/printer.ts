/**
 * additionalPrinterColumns: the simple JSONPath the apiextensions server accepts (`.a.b`, `[n]`,
 * `[*]`, `[?(@.k=="v")]`), and a cell as its table convertor makes one: the first result only,
 * strings printed as they are and other values as JSON.
 */
import type { Json } from '../openapi.ts';
import { isJsonObject } from '../json.ts';

type Step = { key: string } | { index: number } | { all: true } | { filter: { key: string; value: string } };

export function parsePath(path: string): Step[] | undefined {
  const steps: Step[] = [];
  const re = /\.([A-Za-z0-9_-]+)|\[(\d+)\]|\[\*\]|\[\?\(@\.([A-Za-z0-9_-]+)\s*==\s*["']([^"']*)["']\)\]/y;
  let i = 0;
  while (i < path.length) {
    re.lastIndex = i;
    const m = re.exec(path);
    if (!m) return undefined;
    if (m[1] !== undefined) steps.push({ key: m[1] });
    else if (m[2] !== undefined) steps.push({ index: Number(m[2]) });
    else if (m[3] !== undefined) steps.push({ filter: { key: m[3], value: m[4] ?? '' } });
    else steps.push({ all: true });
    i = re.lastIndex;
  }
  return steps;
}

export function findResults(obj: Json, path: string): Json[] {
  const steps = parsePath(path);
  if (!steps) return [];
  let cur: Json[] = [obj];
  for (const step of steps) {
    const next: Json[] = [];
    for (const v of cur) {
      if ('key' in step) {
        if (isJsonObject(v) && v[step.key] !== undefined) next.push(v[step.key]!);
      } else if ('index' in step) {
        if (Array.isArray(v) && v[step.index] !== undefined) next.push(v[step.index]!);
      } else if ('all' in step) {
        if (Array.isArray(v)) next.push(...v);
        else if (isJsonObject(v)) next.push(...Object.values(v));
      } else if (Array.isArray(v)) {
        for (const e of v)
          if (isJsonObject(e) && String(e[step.filter.key]) === step.filter.value) next.push(e);
      }
    }
    cur = next;
  }
  return cur;
}

/** The cell of one printer column: undefined when the path finds nothing (kubectl prints `<none>`). */
export function columnCell(obj: Json, jsonPath: string, type: string): string | number | boolean | null {
  const first = findResults(obj, jsonPath)[0];
  if (first === undefined || first === null) return null;
  if (type === 'integer' || type === 'number') return typeof first === 'number' ? first : null;
  if (type === 'boolean') return typeof first === 'boolean' ? first : null;
  return typeof first === 'string' ? first : JSON.stringify(first);
}
