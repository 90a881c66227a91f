/**
 * `npl-lb migrate ako <values.yaml>` and `npl-lb migrate cis <file | -- flags...>`: the npl-lb Helm
 * values equivalent to an AKO or CIS installation, printed with a note for each setting that has
 * no equivalent or needs a hand (docs/migrating-from-ako.md, docs/migrating-from-cis.md).
 */
import { readFileSync } from 'node:fs';
import { migrateAko } from '../migrate/ako.ts';
import { migrateAkoObjects } from '../migrate/ako-objects.ts';
import { migrateCis } from '../migrate/cis.ts';
import { migrateCisDocument } from '../migrate/cis-values.ts';
import { runMigrateCheck } from './migrate-check.ts';
import { migrateCisObjects } from '../migrate/cis-objects.ts';
import { renderObjects, type SourceObject, sourceObjectSchema } from '../migrate/objects.ts';
import { type Migration, renderMigration } from '../migrate/result.ts';
import { ErrorCodes, NplError } from '../runtime/errors.ts';
import { parseYamlDocuments, YamlInputError } from '../runtime/yaml-input.ts';

export const MIGRATE_HELP = `Usage:
  npl-lb migrate ako <AKO values.yaml>
  npl-lb migrate cis <CIS Helm values.yaml | CIS Deployment.yaml>
  npl-lb migrate cis -- --bigip-url=... --bigip-partition=... [CIS flags]
  npl-lb migrate ako -f <HTTPRules, HostRules, AviInfraSettings, and their Ingresses or Routes> ...
  npl-lb migrate cis -f <VirtualServers, TransportServers> ... [--ingress-class=npl-lb]
  npl-lb migrate ako|cis --check [--kubeconfig PATH] <the same input as above>

Prints npl-lb Helm values equivalent to the AKO or CIS settings, and a note for each setting that
has no equivalent, changed, or needs a hand (secrets are never printed). With -f (repeatable; YAML
files of objects or Lists, as kubectl get -o yaml prints them), prints instead the npl-lb objects
equivalent to the custom resources (BackendPolicies, and Ingresses for CIS VirtualServers) for
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

function fromCis(rest: string[]): { m: Migration; source: string } {
  if (rest[0] === '--') return { m: migrateCis(rest.slice(1)), source: 'CIS flags' };
  if (rest.length !== 1 || rest[0]!.startsWith('--'))
    throw new NplError(ErrorCodes.FLAG_INVALID, "migrate cis takes one file, or its flags after '--'");
  for (const doc of documents(rest[0]!)) {
    const m = migrateCisDocument(doc);
    if (m) return { m, source: `CIS settings in ${rest[0]!}` };
  }
  throw new NplError(
    ErrorCodes.CONFIG_INVALID,
    `${rest[0]!} holds neither CIS Helm values (args:) nor a Deployment with container args`,
  );
}

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

function runObjects(from: 'ako' | 'cis', files: string[], ingressClass: string): Promise<number> {
  if (!/^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/.test(ingressClass) || ingressClass.length > 253)
    throw new NplError(
      ErrorCodes.FLAG_INVALID,
      `--ingress-class ${JSON.stringify(ingressClass)} is not an object name`,
    );
  const objects = objectsOf(files);
  const m = from === 'ako' ? migrateAkoObjects(objects) : migrateCisObjects(objects, ingressClass);
  process.stdout.write(renderObjects(m, `${from.toUpperCase()} objects in ${files.join(', ')}`));
  return Promise.resolve(0);
}

export function runMigrate(argv: string[]): Promise<number> {
  const [from, ...args] = argv;
  if (from === undefined || from === '--help' || from === '-h') {
    process.stdout.write(MIGRATE_HELP);
    return Promise.resolve(from === undefined ? 2 : 0);
  }
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
    if (from !== 'ako' && from !== 'cis')
      throw new NplError(ErrorCodes.FLAG_INVALID, `migrate from "${from}": ako or cis`);
    if (rest.length > 0)
      throw new NplError(
        ErrorCodes.FLAG_INVALID,
        'give the settings and the objects in two runs: one prints Helm values, the other (-f) a manifest for kubectl',
      );
    return runObjects(from, files, ingressClass);
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
  if (check) return runMigrateCheck(out.m.values, out.source, from === 'ako' ? 'AKO' : 'CIS', kubeconfig);
  process.stdout.write(renderMigration(out.m, out.source));
  return Promise.resolve(0);
}
