/**
 * What a migration gives: npl-lb Helm values (only what the source says, the chart's defaults for
 * the rest) and a note for every source setting that has no equivalent, changed on the way, or needs
 * a hand (a secret that is not printed, a choice to make), with why. Printed as a values file whose
 * notes are comments, so the output can be given to `helm install -f` as it is.
 */
import { stringify } from 'yaml';
import { ErrorCodes, NplError } from '../runtime/errors.ts';

export interface MigrationNote {
  /** The source setting, as its own file or flag names it. */
  from: string;
  kind: 'no equivalent' | 'changed' | 'by hand';
  why: string;
}

export interface Migration {
  values: Record<string, unknown>;
  notes: MigrationNote[];
}

/** A cluster name as npl-lb takes it (a DNS label of at most 32 characters), and whether it changed. */
export function clusterNameOf(name: string): { name: string; changed: boolean } {
  const cleaned = name
    .toLowerCase()
    .replace(/[^a-z0-9-]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 32)
    .replace(/-+$/, '');
  return { name: cleaned || 'my-cluster', changed: cleaned !== name };
}

/** Sets `path` (dotted) in `values`, creating the objects on the way. */
export function put(values: Record<string, unknown>, path: string, value: unknown): void {
  const keys = path.split('.');
  let at = values;
  for (const k of keys.slice(0, -1)) {
    const next = at[k];
    if (typeof next !== 'object' || next === null || Array.isArray(next)) at[k] = {};
    at = at[k] as Record<string, unknown>;
  }
  at[keys.at(-1)!] = value;
}

/**
 * A note's text as one comment line: line breaks and other control characters (a source value
 * can hold them) written as escapes, so no note ends its comment and becomes YAML of the output.
 */
export const commentLine = (text: string): string =>
  text.replace(
    // eslint-disable-next-line no-control-regex
    /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/g,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );

/** The values file: a header naming the source, the values, then the notes as comments. */
export function renderMigration(m: Migration, source: string): string {
  const lines = [
    `# npl-lb values migrated from ${source}`,
    '# Review the notes at the end, then: helm install npl-lb deploy/helm/npl-lb -n npl-lb-system -f <this file>',
    '',
    stringify(m.values, { lineWidth: 0 }).trimEnd(),
    '',
  ];
  // Settings with the same note are one line.
  const grouped = new Map<string, string[]>();
  for (const n of m.notes) {
    const k = `${n.kind}): ${n.why}`;
    grouped.set(k, [...(grouped.get(k) ?? []), n.from]);
  }
  if (grouped.size > 0) {
    lines.push('# Not carried over as it was:');
    for (const [k, from] of grouped) lines.push(commentLine(`#   ${from.join(', ')} (${k}`));
  } else lines.push('# Every setting was carried over.');
  return `${lines.join('\n')}\n`;
}

/** A value as upstream's samples leave it to be filled in: `<name_of_partition>`, `${VIP_NETWORK}`. */
const PLACEHOLDER = /<[^<>\n]{1,80}>|\$\{[^}\n]{1,80}\}/;

/**
 * Refuses input still holding an upstream sample's placeholder (exit code 2, one line naming the
 * setting): such a value is never turned into values, not even as a note.
 */
export function refusePlaceholders(settings: Iterable<[string, unknown]>): void {
  for (const [key, value] of settings) {
    const texts: string[] = [];
    const walk = (v: unknown) => {
      if (typeof v === 'string') texts.push(v);
      else if (Array.isArray(v)) v.forEach(walk);
      else if (typeof v === 'object' && v !== null) Object.values(v).forEach(walk);
    };
    walk(value);
    const hit = texts.find((t) => PLACEHOLDER.test(t));
    if (hit !== undefined)
      throw new NplError(
        ErrorCodes.CONFIG_INVALID,
        `${key}=${JSON.stringify(hit.slice(0, 80))} is a placeholder of a sample, not a setting: fill it in first`,
      );
  }
}
