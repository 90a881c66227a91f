/**
 * YAML from outside (a request body, a file given to `migrate`, the controller's config) read in
 * time linear in its size, within limits, with one typed error per way it can fail:
 * - js-yaml reads it: its duplicate-key check is one pass (the `yaml` package's compares every
 *   key with every other of its map: 16,000 keys took 3.3 s, a 10 MB values file minutes), and it
 *   reads 10 MB in under a second;
 * - a text that is JSON (what kubectl and Helm send as an apply configuration) is read by
 *   JSON.parse, which is YAML's answer for it, 20 to 50 times faster (a duplicate key keeps the
 *   last value, as every JSON body of the API server does);
 * - aliases are bounded (a "billion laughs" file is refused, not expanded), and so are the size and
 *   the nesting depth (checked without recursion, so a deep document cannot overflow the stack of
 *   the code that reads it next).
 */
import { extname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { loadAll } from 'js-yaml';

export type YamlProblem = 'syntax' | 'duplicate-key' | 'aliases' | 'depth' | 'size';

export class YamlInputError extends Error {
  readonly problem: YamlProblem;
  constructor(problem: YamlProblem, message: string) {
    super(message);
    this.name = 'YamlInputError';
    this.problem = problem;
  }
}

export interface YamlLimits {
  /** Bytes of text (UTF-8). */
  maxBytes: number;
  /** Nesting of maps and lists. */
  maxDepth: number;
  /** Alias nodes per document (js-yaml's `maxAliases`); what they expand to is bounded too. */
  maxAliases: number;
}

/**
 * The limits when none are given: ample for any manifest or values file (the API server takes
 * bodies of 3 MiB, and no Kubernetes object nests 1,000 deep), small enough that nothing a user
 * sends can stall a process.
 */
export const DEFAULT_YAML_LIMITS: YamlLimits = {
  maxBytes: 16 * 1024 * 1024,
  maxDepth: 1000,
  maxAliases: 100,
};

/**
 * Whether a JSON-looking text nests brackets deeper than `max`, found in one pass outside strings:
 * checked before JSON.parse sees it (the code that reads the value next recurses).
 */
export function textNestsDeeperThan(text: string, max: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 92)
        i++; // backslash
      else if (c === 34) inString = false;
      continue;
    }
    if (c === 34) inString = true;
    else if (c === 123 || c === 91) {
      if (++depth > max) return true;
    } else if (c === 125 || c === 93) depth--;
  }
  return false;
}

const looksLikeJson = (text: string): boolean => /^\s*[{[]/.test(text);

/**
 * How many nodes a value holds once its shared parts (YAML aliases of maps and lists, which the
 * parser hands back as one object referenced many times) are counted at every place they appear,
 * up to `cap` (memoised by identity: linear in the distinct nodes however much they expand).
 */
function expandedSize(value: unknown, cap: number): number {
  const memo = new Map<object, number>();
  const size = (v: unknown): number => {
    if (typeof v !== 'object' || v === null) return 1;
    const known = memo.get(v);
    if (known !== undefined) return known;
    let n = 1;
    for (const c of Array.isArray(v) ? v : Object.values(v as object)) {
      n += size(c);
      if (n > cap) break;
    }
    memo.set(v, n);
    return n;
  };
  return size(value);
}

const firstLine = (err: unknown): string =>
  (err instanceof Error ? err.message : String(err)).split('\n')[0]!;

/**
 * Every document of a YAML (or JSON) text, as plain values; empty documents left out. YAML 1.2's
 * core schema (as kubectl and the API server read a manifest), duplicate keys refused (js-yaml
 * finds them in one pass), nesting bounded by the parser, aliases by their count and by what
 * they expand to.
 */
export function parseYamlDocuments(text: string, limits: YamlLimits = DEFAULT_YAML_LIMITS): unknown[] {
  const bytes = Buffer.byteLength(text);
  if (bytes > limits.maxBytes) throw new YamlInputError('size', `${bytes} bytes, at most ${limits.maxBytes}`);
  if (looksLikeJson(text)) {
    if (textNestsDeeperThan(text, limits.maxDepth))
      throw new YamlInputError('depth', `nested deeper than ${limits.maxDepth} levels`);
    try {
      return [JSON.parse(text) as unknown];
    } catch {
      // Not JSON after all (YAML flow style, comments): the YAML parser's turn.
    }
  }
  let docs: unknown[];
  try {
    docs = loadAll(text, { maxDepth: limits.maxDepth, maxAliases: limits.maxAliases });
  } catch (err) {
    const msg = firstLine(err);
    if (err instanceof RangeError || /maxDepth/.test(msg))
      throw new YamlInputError('depth', `nested deeper than ${limits.maxDepth} levels`);
    if (/alias/i.test(msg))
      throw new YamlInputError('aliases', `too many aliases (at most ${limits.maxAliases} per document)`);
    if (/duplicated mapping key/.test(msg))
      throw new YamlInputError('duplicate-key', `map keys must be unique: ${msg}`);
    throw new YamlInputError('syntax', msg);
  }
  // A "billion laughs": few aliases, each of a list of aliases, expanding to billions of nodes
  // in whatever reads the value next. Refused past 1,000,000 nodes or 100 per byte of text.
  const cap = Math.max(1_000_000, bytes * 100);
  const out: unknown[] = [];
  for (const doc of docs) {
    if (doc === null || doc === undefined) continue;
    if (expandedSize(doc, cap) > cap)
      throw new YamlInputError('aliases', `its aliases expand past ${cap} nodes`);
    out.push(doc);
  }
  return out;
}

/** The one document of a text (none: undefined; more than one is a syntax error). */
export function parseYamlDocument(text: string, limits: YamlLimits = DEFAULT_YAML_LIMITS): unknown {
  const docs = parseYamlDocuments(text, limits);
  if (docs.length > 1) throw new YamlInputError('syntax', `${docs.length} documents where one is expected`);
  return docs[0];
}

/** Texts this long are parsed on a worker thread by parseYamlOffThread; shorter ones at once. */
export const OFF_THREAD_BYTES = 64 * 1024;

type WorkerAnswer = { id: number; docs?: unknown[]; problem?: YamlProblem; message?: string };
let worker: Worker | undefined;
let nextId = 0;
const waiting = new Map<number, { resolve: (v: unknown[]) => void; reject: (e: Error) => void }>();

function yamlWorker(): Worker {
  if (worker) return worker;
  // The worker runs from the same place and in the same form: .js once built, .ts from the
  // source tree, where it registers tsx first (a worker does not inherit the parent's loader).
  const ext = extname(fileURLToPath(import.meta.url));
  const entry = new URL(`./yaml-worker${ext}`, import.meta.url).href;
  const tsx = ext === '.ts' ? import.meta.resolve('tsx/esm/api') : undefined;
  const w = new Worker(
    `(async ({ entry, tsx }) => {
       if (tsx) (await import(tsx)).register();
       await import(entry);
     })(require('node:worker_threads').workerData);`,
    { eval: true, workerData: { entry, tsx } },
  );
  w.on('message', (a: WorkerAnswer) => {
    const p = waiting.get(a.id);
    waiting.delete(a.id);
    if (waiting.size === 0) w.unref();
    if (!p) return;
    if (a.docs) p.resolve(a.docs);
    else p.reject(new YamlInputError(a.problem ?? 'syntax', a.message ?? 'not readable'));
  });
  const fail = (err: Error) => {
    worker = undefined;
    for (const p of waiting.values()) p.reject(err);
    waiting.clear();
  };
  w.on('error', fail);
  w.on('exit', () => fail(new Error('the YAML worker stopped')));
  w.unref();
  worker = w;
  return w;
}

/**
 * parseYamlDocuments for a server: a long YAML text is parsed on a worker thread (its cost stays
 * off the event loop that answers every other client); JSON and short texts at once.
 */
export async function parseYamlOffThread(
  text: string,
  limits: YamlLimits = DEFAULT_YAML_LIMITS,
): Promise<unknown[]> {
  if (text.length < OFF_THREAD_BYTES || looksLikeJson(text)) return parseYamlDocuments(text, limits);
  const w = yamlWorker();
  const id = nextId++;
  return new Promise((resolve, reject) => {
    waiting.set(id, { resolve, reject });
    w.ref();
    w.postMessage({ id, text, limits });
  });
}
