/**
 * `npl-lb migrate ako <values.yaml>` and `npl-lb migrate cis <file | -- flags...>`: the npl-lb Helm
 * values equivalent to an AKO or CIS installation, printed with a note for each setting that has
 * no equivalent or needs a hand (docs/migrating-from-ako.md, docs/migrating-from-cis.md).
 */
import { readFileSync } from 'node:fs';
import { parseAllDocuments } from 'yaml';
import { migrateAko } from '../migrate/ako.ts';
import { cisArgsOf, migrateCis } from '../migrate/cis.ts';
import { type Migration, renderMigration } from '../migrate/result.ts';
import { ErrorCodes, NplError } from '../runtime/errors.ts';

export const MIGRATE_HELP = `Usage:
  npl-lb migrate ako <AKO values.yaml>
  npl-lb migrate cis <CIS Helm values.yaml | CIS Deployment.yaml>
  npl-lb migrate cis -- --bigip-url=... --bigip-partition=... [CIS flags]

Prints npl-lb Helm values equivalent to the AKO or CIS settings, and a note for each setting that
has no equivalent, changed, or needs a hand (secrets are never printed).
`;

function documents(file: string): unknown[] {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw new NplError(ErrorCodes.FLAG_INVALID, `cannot read ${file}: ${(err as Error).message}`);
  }
  const docs = parseAllDocuments(text);
  const bad = docs.find((d) => d.errors.length > 0);
  if (bad)
    throw new NplError(
      ErrorCodes.CONFIG_INVALID,
      `${file} is not valid YAML: ${bad.errors[0]!.message.split('\n')[0]!}`,
    );
  return docs.map((d) => d.toJS() as unknown).filter((d) => d !== null && d !== undefined);
}

function fromCis(rest: string[]): { m: Migration; source: string } {
  if (rest[0] === '--') return { m: migrateCis(rest.slice(1)), source: 'CIS flags' };
  if (rest.length !== 1 || rest[0]!.startsWith('--'))
    throw new NplError(ErrorCodes.FLAG_INVALID, "migrate cis takes one file, or its flags after '--'");
  for (const doc of documents(rest[0]!)) {
    const args = cisArgsOf(doc);
    if (args) return { m: migrateCis(args), source: `CIS settings in ${rest[0]!}` };
  }
  throw new NplError(
    ErrorCodes.CONFIG_INVALID,
    `${rest[0]!} holds neither CIS Helm values (args:) nor a Deployment with container args`,
  );
}

export function runMigrate(argv: string[]): Promise<number> {
  const [from, ...rest] = argv;
  if (from === undefined || from === '--help' || from === '-h') {
    process.stdout.write(MIGRATE_HELP);
    return Promise.resolve(from === undefined ? 2 : 0);
  }
  let out: { m: Migration; source: string };
  if (from === 'ako') {
    if (rest.length !== 1)
      throw new NplError(
        ErrorCodes.FLAG_INVALID,
        'migrate ako takes one file: the values.yaml of the AKO release',
      );
    const [doc] = documents(rest[0]!);
    if (typeof doc !== 'object' || doc === null || Array.isArray(doc))
      throw new NplError(ErrorCodes.CONFIG_INVALID, `${rest[0]!} is not a values file (a YAML mapping)`);
    out = { m: migrateAko(doc), source: `AKO values ${rest[0]!}` };
  } else if (from === 'cis') out = fromCis(rest);
  else throw new NplError(ErrorCodes.FLAG_INVALID, `migrate from "${from}": ako or cis`);
  process.stdout.write(renderMigration(out.m, out.source));
  return Promise.resolve(0);
}
