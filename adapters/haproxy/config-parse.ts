/**
 * The haproxy.cfg -> model reading (config.ts writes the file): the file split into sections, our
 * sections (the owner mark) read back into pools and virtual services from their lines and their
 * `# npl-lb ...` comments, everyone else's kept by name and verbatim. Pure: no I/O.
 */
import type {
  ClientValidation,
  HttpRoute,
  L4VirtualService,
  L7VirtualService,
  Member,
  PathType,
  Pool,
} from '../../src/model/types.ts';
import type { Observed } from '../../src/adapter/changes.ts';
import { PART_OF } from './tls-mixed.ts';
import { keepServedMirrors } from './mirrors.ts';
import { readStoredCheck, storedPolicy } from '../../src/adapter/stored-check.ts';
import { readFrontend, readSourceRanges } from './policy-lines.ts';
import { parseGatewayRoutes, parseSniRoutes } from './http-routes.ts';
import { FILE_PREFIX, readBackendPolicy } from './policy-read.ts';
import { CLIENT_FALLBACK, CLIENT_REQUIRED } from './tls-words.ts';

export interface Section {
  kind: string;
  name: string;
  lines: string[];
}

const SECTION =
  /^(global|defaults|frontend|backend|listen|peers|resolvers|userlist|program|http-errors|cache|ring|mailers)\b\s*(\S*)/;

export function parseSections(text: string): Section[] {
  const out: Section[] = [];
  for (const line of text.split('\n')) {
    const m = SECTION.exec(line);
    if (m) out.push({ kind: m[1]!, name: m[2] ?? '', lines: [line] });
    else if (out.length > 0) out[out.length - 1]!.lines.push(line);
  }
  return out;
}

/** The `key=value` words of one of our comments (values percent-encoded: encode.ts `pct`). */
export const kv = (text: string): Record<string, string> =>
  Object.fromEntries([...text.matchAll(/(\w+)=(\S*)/g)].map((m) => [m[1]!, decodeURIComponent(m[2]!)]));

/**
 * An address and port as haproxy.cfg writes them: `[ipv6]:port` (bracketed: an IPv6 address holds
 * colons) or `ipv4:port`. Groups: the IPv6 address, the IPv4 one, the port.
 */
const HOST_PORT = String.raw`(?:\[([0-9A-Fa-f:.]+)\]|([^\s:\[\]]+)):(\d+)`;
/** A server line: HOST_PORT's groups, then its words and our comment. */
const SERVER_LINE = new RegExp(String.raw`^\s*server\s+\S+\s+${HOST_PORT}(.*?)(?:#\s*npl-lb\s+(.*))?$`);
const BIND_LINE = new RegExp(String.raw`^\s*bind\s+${HOST_PORT}`, 'm');
const DEFAULT_BACKEND = /^\s*default_backend\s+(\S+)/m;

function parseMembers(lines: string[]): Member[] {
  const out: Member[] = [];
  for (const l of lines) {
    const m = SERVER_LINE.exec(l);
    if (!m) continue;
    const meta = kv(m[5] ?? '');
    out.push({
      address: (m[1] ?? m[2])!,
      port: Number(m[3]),
      node: meta.node ?? '',
      pod: meta.pod ?? '',
      enabled: !/\bweight 0\b/.test(m[4] ?? ''),
    });
  }
  return out;
}

/**
 * One of our backends: the pool, its Service and check from its `# npl-lb pool` comment, its
 * policy from its own lines (policy-read.ts; `exact: false` when they are not the lines we write).
 */
function readPool(s: Section, body: string, readCa: CaReader): { pool: Pool; exact: boolean } {
  const meta = kv(/# npl-lb pool (.*)/.exec(body)?.[1] ?? '');
  const serverWords = s.lines.flatMap((l) => {
    const m = SERVER_LINE.exec(l);
    return m ? [m[4] ?? ''] : [];
  });
  const { policy, exact } = readBackendPolicy(s.name, s.lines, serverWords, storedPolicy(meta));
  // The CA a server line or our note names, read where it is (a file of ours): its content.
  if (policy.backendTls) {
    const { ca, clientCertificate } = policy.backendTls;
    // A `crt` not of our store stays as read (`crt:<path>`): never the desired name, so rewritten.
    const crt = clientCertificate && (readCa(clientCertificate) ?? clientCertificate);
    policy.backendTls = {
      ...policy.backendTls,
      ca: readCa(ca) ?? '',
      ...(crt ? { clientCertificate: crt } : {}),
    };
  }
  return {
    pool: {
      name: s.name,
      protocol: meta.protocol === 'UDP' ? 'UDP' : 'TCP',
      health: meta.health === 'http' ? 'http' : meta.health === 'udp' ? 'udp' : 'tcp',
      ...readStoredCheck(meta.check),
      ...policy,
      members: parseMembers(s.lines),
      service: meta.service ?? '',
      servicePort: meta.port ?? '',
    },
    exact,
  };
}

/** Where one of our frontends listens: its first bind line. */
function boundAt(body: string, defaultPort: number): { vip: string; port: number } {
  const bound = BIND_LINE.exec(body);
  return { vip: bound?.[1] ?? bound?.[2] ?? '', port: Number(bound?.[3] ?? defaultPort) };
}

/** One of our `mode tcp` frontends (its `# npl-lb l4` comment): a pool, or SNI routes. */
function readL4(s: Section, body: string, comment: string, loop: string | undefined): L4VirtualService {
  const meta = kv(comment);
  const vs: L4VirtualService = {
    kind: 'l4',
    name: s.name,
    ...boundAt(body, 0),
    protocol: meta.protocol === 'UDP' ? 'UDP' : 'TCP',
    pool: DEFAULT_BACKEND.exec(body)?.[1] ?? '',
    source: meta.source ?? '',
    ...readSourceRanges(meta.sourceRanges),
    ...readFrontend(meta.frontend),
  };
  const sni = parseSniRoutes(body);
  if (sni) {
    vs.pool = '';
    vs.sni = sni;
  }
  // Terminate mode: the bind's own `ssl crt-list`, or in Mixed mode the loop's (tls-mixed.ts); a
  // bind without it passes TLS through, whatever the comment says: read as no termination, and
  // written again.
  const certs = /certificates=(\S*)/.exec(comment)?.[1];
  const terminating = /^\s*bind .* ssl crt-list /m;
  const mixed = sni?.some((r) => r.passthrough) === true;
  if (certs !== undefined && (mixed ? loop !== undefined && terminating.test(loop) : terminating.test(body)))
    vs.certificates = certs === '' ? [] : certs.split(',').map(decodeURIComponent);
  return vs;
}

/** The routes of one of our `mode http` frontends: Gateway API rules, or Ingress-style comments. */
function readRoutes(body: string): HttpRoute[] {
  return (
    parseGatewayRoutes(body) ??
    [...body.matchAll(/# npl-lb route \d+ (.*)/g)].map((m) => {
      const r = kv(m[1]!);
      return {
        host: r.host ?? '',
        path: r.path ?? '/',
        pathType: (r.type ?? 'Prefix') as PathType,
        pool: r.pool ?? '',
        source: r.source ?? '',
      };
    })
  );
}

/** One of our `mode http` frontends (its `# npl-lb l7` comment). */
function readL7(s: Section, body: string, readCa: CaReader): L7VirtualService {
  const meta = kv(/# npl-lb l7 (.*)/.exec(body)?.[1] ?? '');
  const vs: L7VirtualService = {
    kind: 'l7',
    name: s.name,
    ...boundAt(body, 80),
    ingressClass: meta.ingressClass ?? '',
    routes: readRoutes(body),
    defaultPool: DEFAULT_BACKEND.exec(body)?.[1],
    ...readFrontend(meta.frontend),
  };
  if (meta.http2 === 'true') vs.http2 = true;
  if (meta.protocol === 'HTTPS') {
    vs.protocol = 'HTTPS';
    const hosts = hostList(meta.listenerHosts);
    if (hosts) vs.listenerHosts = hosts;
    const certs = /# npl-lb l7 .*certificates=(\S*)/.exec(body)?.[1] ?? '';
    vs.certificates = certs === '' ? [] : certs.split(',').map(decodeURIComponent);
    const client = clientValidationOf(body, readCa);
    if (client)
      vs.clientValidation = {
        ...client,
        ...(meta.clientSubjectHeader ? { subjectHeader: meta.clientSubjectHeader } : {}),
      };
  }
  return vs;
}

/** A mirror's frontend (mirrors.ts): part of its virtual service, named by the pool it sends to. */
const MIRROR_MARK = /# npl-lb part-of=\S+ mirror=/;

/** A JSON list of names as our note keeps it (listenerHosts), or undefined if it is not one. */
export function hostList(text: string | undefined): string[] | undefined {
  if (text === undefined) return undefined;
  try {
    const v: unknown = JSON.parse(text);
    return Array.isArray(v) && v.every((x) => typeof x === 'string') ? (v as string[]) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Client certificate validation read back from the bind line's own words (config.ts
 * clientWords): exactly what we write ends the line, else none (a `verify none` or another word
 * after them reads as none, and the next pass writes the bind again); the CA from its file.
 */
const CLIENT_WORDS = new RegExp(
  String.raw` ssl crt-list \S+(?: alpn h2,http/1\.1)? ca-file (\S+) (${CLIENT_REQUIRED}|${CLIENT_FALLBACK})$`,
);
function clientValidationOf(body: string, readCa: CaReader): ClientValidation | undefined {
  const bindLine = body.split('\n').find((l) => /^\s*bind\s/.test(l)) ?? '';
  const m = CLIENT_WORDS.exec(bindLine.trimEnd());
  const ca = m ? readCa(`${FILE_PREFIX}${m[1]!}`) : undefined;
  return m && ca ? { ca, insecureFallback: m[2] === CLIENT_FALLBACK } : undefined;
}

/**
 * A CA bundle's content from what the file names it by: `file:<path>` (a server line's ca-file),
 * `tag:<hex>` (our note, ca-bundles.ts) or SYSTEM_CA; undefined when it cannot be read.
 */
export type CaReader = (ref: string) => string | undefined;

/** Our objects from the file, in model form, and everyone else's by name. */
export function parseConfig(
  text: string,
  owner: string,
  readCa: CaReader = (ref) => ref,
): Observed & { foreignSections: Section[] } {
  const observed: Observed & { foreignSections: Section[] } = {
    owned: { pools: [], virtualServices: [] },
    foreign: [],
    foreignSections: [],
  };
  const loops = new Map<string, string>();
  // The pools each virtual service's mirror frontends send to (mirrors.ts).
  const mirrors = new Map<string, Set<string>>();
  const l4s: [Section, string, string][] = [];
  for (const s of parseSections(text)) {
    if (s.kind === 'global' || s.kind === 'defaults') continue;
    // An explicit `# npl-lb owner=<x>` line wins over the name prefix.
    const marked = /# npl-lb owner=(\S+)/.exec(s.lines.join('\n'))?.[1];
    const ours = marked !== undefined ? marked === owner : s.name.startsWith(`${owner}--`);
    if (!ours) {
      observed.foreignSections.push(s);
      if (s.kind === 'backend' || s.kind === 'frontend' || s.kind === 'listen') {
        observed.foreign.push({
          kind: s.kind === 'backend' ? 'pool' : 'virtualService',
          name: s.name,
          owner: marked ?? (s.name.includes('--') ? s.name.split('--')[0]! : 'unknown'),
        });
      }
      continue;
    }
    const body = s.lines.join('\n');
    // The sections of a virtual service's loop (Mixed mode) are read with it, below.
    const partOf = PART_OF.exec(body)?.[1];
    if (partOf !== undefined) {
      const mirrorTo = MIRROR_MARK.test(body) ? DEFAULT_BACKEND.exec(body)?.[1] : undefined;
      if (s.kind === 'frontend' && mirrorTo !== undefined)
        mirrors.set(partOf, new Set([...(mirrors.get(partOf) ?? []), mirrorTo]));
      else if (s.kind === 'frontend') loops.set(partOf, body);
      continue;
    }
    if (s.kind === 'backend') {
      const { pool, exact } = readPool(s, body, readCa);
      observed.owned.pools.push(pool);
      if (!exact) (observed.drifted ??= []).push({ kind: 'pool', name: pool.name });
    } else if (s.kind === 'frontend') {
      const l4 = /# npl-lb l4 (.*)/.exec(body);
      if (l4) l4s.push([s, body, l4[1]!]);
      else observed.owned.virtualServices.push(readL7(s, body, readCa));
    }
  }
  for (const [s, body, comment] of l4s)
    observed.owned.virtualServices.push(readL4(s, body, comment, loops.get(s.name)));
  for (const vs of observed.owned.virtualServices)
    if (vs.kind === 'l7') keepServedMirrors(vs, mirrors.get(vs.name) ?? new Set());
  return observed;
}
