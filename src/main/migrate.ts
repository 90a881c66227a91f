/**
 * `npl-lb migrate <from> ...`: the npl-lb Helm values equivalent to another controller's
 * installation, printed with a note for each setting that has no equivalent or needs a hand; `-f`
 * its custom resources as npl-lb objects; `--check` the values held against a cluster. The
 * controllers one can migrate from are the vendors' own (their `Vendor.migrations`, each in its
 * vendor's folder); this command names none (docs/migrating-from-*.md).
 */
import { readFileSync } from 'node:fs';
import { VENDORS } from '../../adapters/index.ts';
import { renderObjects, type SourceObject, sourceObjectSchema } from '../migrate/objects.ts';
import { renderMigration } from '../migrate/result.ts';
import type { MigrationSource } from '../migrate/source.ts';
import { ErrorCodes, NplError } from '../runtime/errors.ts';
import { parseYamlDocuments, YamlInputError } from '../runtime/yaml-input.ts';
import { runMigrateCheck } from './migrate-check.ts';

const SOURCES: readonly MigrationSource[] = VENDORS.flatMap((v) => v.migrations ?? []);
const FROM = SOURCES.map((x) => x.from).join('|');
const PRODUCTS = SOURCES.map((x) => x.product).join(' or ');

export const MIGRATE_HELP = `Usage:
${SOURCES.flatMap((x) => x.usage)
  .map((u) => `  npl-lb migrate ${u}`)
  .join('\n')}
  npl-lb migrate ${FROM} --check [--kubeconfig PATH] <the same input as above>

Prints npl-lb Helm values equivalent to the ${PRODUCTS} settings, and a note for each setting that
has no equivalent, changed, or needs a hand (secrets are never printed). With -f (repeatable; YAML
files of objects or Lists, as kubectl get -o yaml prints them), prints instead the npl-lb objects
equivalent to the custom resources (BackendPolicies, and Ingresses where they route) for
kubectl apply -f, with the same notes.

With --check, the values are not printed but held against the cluster the kubeconfig names (read
only): which LoadBalancer Services and Ingresses would change hands (npl-lb would serve what the old
controller serves now, and their address would move), which npl-lb would serve that no one serves,
what the chart would collide with (an IngressClass of its name, a second default class), and
whether a NodePortLocal agent would be doubled or missing. Exit code 0 when nothing would change
hands or collide, 1 otherwise.
`;

function documents(file: string): unknown[] {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw new NplError(ErrorCodes.FLAG_INVALID, `cannot read ${file}: ${(err as Error).message}`);
  }
  try {
    return parseYamlDocuments(text, MIGRATE_LIMITS);
  } catch (err) {
    if (!(err instanceof YamlInputError)) throw err;
    // Past a limit (size, depth, aliases): exit code 3; not YAML (or a key twice): 2.
    const limit = err.problem === 'size' || err.problem === 'depth' || err.problem === 'aliases';
    throw new NplError(
      limit ? ErrorCodes.INPUT_LIMIT : ErrorCodes.CONFIG_INVALID,
      `${file} is not ${limit ? 'read' : 'valid YAML'}: ${err.message}`,
    );
  }
}

/** What `migrate` reads: a values file or a dump of objects is far below these. */
const MIGRATE_LIMITS = { maxBytes: 64 * 1024 * 1024, maxDepth: 1000, maxAliases: 100 };

interface Options {
  files: string[];
  ingressClass: string;
  check: boolean;
  kubeconfig: string | undefined;
  rest: string[];
}

/**
 * `-f FILE` (repeatable), `--ingress-class=NAME`, `--check` and `--kubeconfig PATH` before any
 * `--`; the other arguments as they were.
 */
function options(args: string[]): Options {
  const files: string[] = [];
  let ingressClass = 'npl-lb';
  let check = false;
  let kubeconfig: string | undefined;
  const rest: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    if (a === '--') {
      rest.push(...args.slice(i));
      break;
    }
    if (a === '-f' || a === '--filename') {
      if (args[i + 1] === undefined) throw new NplError(ErrorCodes.FLAG_INVALID, `${a} needs a file`);
      files.push(args[++i]!);
    } else if (a.startsWith('--ingress-class=')) ingressClass = a.slice('--ingress-class='.length);
    else if (a === '--check') check = true;
    else if (a === '--kubeconfig' || a.startsWith('--kubeconfig=')) {
      kubeconfig = a.includes('=') ? a.slice('--kubeconfig='.length) : args[++i];
      if (!kubeconfig) throw new NplError(ErrorCodes.FLAG_INVALID, '--kubeconfig needs a file');
    } else rest.push(a);
  }
  if (kubeconfig !== undefined && !check)
    throw new NplError(ErrorCodes.FLAG_INVALID, '--kubeconfig names the cluster --check reads');
  return { files, ingressClass, check, kubeconfig, rest };
}

/** The objects of the files: each document, the items of a List, each read as the migration reads them. */
function objectsOf(files: string[]): SourceObject[] {
  const out: SourceObject[] = [];
  for (const file of files)
    for (const doc of documents(file)) {
      const items =
        (doc as { kind?: unknown; items?: unknown }).kind === 'List'
          ? (doc as { items?: unknown }).items
          : [doc];
      for (const item of Array.isArray(items) ? items : []) {
        const o = sourceObjectSchema.safeParse(item);
        if (!o.success || !o.data.kind)
          throw new NplError(
            ErrorCodes.CONFIG_INVALID,
            `${file} holds a document that is not a Kubernetes object (no kind)`,
          );
        out.push(o.data);
      }
    }
  return out;
}

function runObjects(source: MigrationSource, files: string[], ingressClass: string): Promise<number> {
  if (!/^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/.test(ingressClass) || ingressClass.length > 253)
    throw new NplError(
      ErrorCodes.FLAG_INVALID,
      `--ingress-class ${JSON.stringify(ingressClass)} is not an object name`,
    );
  const m = source.objects(objectsOf(files), ingressClass);
  process.stdout.write(renderObjects(m, `${source.product} objects in ${files.join(', ')}`));
  return Promise.resolve(0);
}

export function runMigrate(argv: string[]): Promise<number> {
  const [from, ...args] = argv;
  if (from === undefined || from === '--help' || from === '-h') {
    process.stdout.write(MIGRATE_HELP);
    return Promise.resolve(from === undefined ? 2 : 0);
  }
  const source = SOURCES.find((x) => x.from === from);
  if (!source)
    throw new NplError(
      ErrorCodes.FLAG_INVALID,
      `migrate from "${from}": ${SOURCES.map((x) => x.from).join(' or ')}`,
    );
  const { files, ingressClass, check, kubeconfig, rest } = options(args);
  if (files.length === 0 && args.some((a) => a.startsWith('--ingress-class=')) && !args.includes('--'))
    throw new NplError(
      ErrorCodes.FLAG_INVALID,
      '--ingress-class names the class of the Ingresses -f migrates',
    );
  if (files.length > 0) {
    if (check)
      throw new NplError(
        ErrorCodes.FLAG_INVALID,
        '--check holds the values of the settings against a cluster; the objects of -f are for kubectl apply --dry-run=server',
      );
    if (rest.length > 0)
      throw new NplError(
        ErrorCodes.FLAG_INVALID,
        'give the settings and the objects in two runs: one prints Helm values, the other (-f) a manifest for kubectl',
      );
    return runObjects(source, files, ingressClass);
  }
  const out = source.settings(rest, documents);
  if (check) return runMigrateCheck(out.m.values, out.source, source.product, kubeconfig);
  process.stdout.write(renderMigration(out.m, out.source));
  return Promise.resolve(0);
}
