/**
 * Every annotation npl-lb reads or writes, with its zod schema. The NodePortLocal ones are
 * Antrea's and must stay byte-compatible with it.
 */
import { z } from 'zod';

/** On a Service: exactly the string "true" turns NodePortLocal on for the Pods it selects. */
export const NPL_ENABLED_ANNOTATION = 'nodeportlocal.antrea.io/enabled';
/** On a Pod: the JSON list of its NodePortLocal mappings. */
export const NPL_POD_ANNOTATION = 'nodeportlocal.antrea.io';

/** On a Service: set by the controller next to the NPL annotation it added, so it only ever removes its own. */
export const NPL_MANAGED_ANNOTATION = 'npl-lb.io/npl-annotated';
/** On a Service or Ingress: the VIP a user asks for. */
export const VIP_ANNOTATION = 'npl-lb.io/vip';
/**
 * On LoadBalancer Services: a sharing key. Services with one key may hold one VIP while their
 * ports do not clash (MetalLB's `metallb.universe.tf/allow-shared-ip`).
 */
export const SHARED_VIP_ANNOTATION = 'npl-lb.io/allow-shared-vip';
/**
 * On an Ingress: exactly "true" answers its hosts' plain-HTTP requests with a redirect to HTTPS
 * (301), for the hosts its `tls:` serves; "false" or absent serves them over both.
 */
export const SSL_REDIRECT_ANNOTATION = 'npl-lb.io/ssl-redirect';
/**
 * On Ingresses: the client addresses its rules serve, CIDRs separated by commas (IPv4 and IPv6);
 * a request one of its rules takes from anyone else is answered 403.
 */
export const SOURCE_RANGES_ANNOTATION = 'npl-lb.io/source-ranges';
/**
 * On an Ingress: how the pools of the Services it routes to are balanced, kept sticky and waited
 * on, for Ingress authors without a BackendPolicy (src/source/ingress/policies.ts; a BackendPolicy
 * on the Service wins). Values as a BackendPolicy takes them.
 */
export const LOAD_BALANCE_ANNOTATION = 'npl-lb.io/load-balance';
export const SESSION_PERSISTENCE_ANNOTATION = 'npl-lb.io/session-persistence';
export const SERVER_TIMEOUT_ANNOTATION = 'npl-lb.io/server-timeout-seconds';
/**
 * On an Ingress: re-encryption to its backends (src/source/ingress/backend-tls.ts). `HTTPS` speaks TLS to every
 * Service it routes to, sending the server name as SNI and verifying it against the CA of the
 * ConfigMap named (its `ca.crt`, in the Ingress's namespace) or `System`.
 */
export const BACKEND_PROTOCOL_ANNOTATION = 'npl-lb.io/backend-protocol';
export const BACKEND_SERVER_NAME_ANNOTATION = 'npl-lb.io/backend-tls-server-name';
export const BACKEND_CA_ANNOTATION = 'npl-lb.io/backend-tls-ca';
/**
 * On an Ingress: client certificates asked for its hosts on HTTPS (src/source/ingress/client-ca.ts):
 * the name of a ConfigMap of its namespace whose `ca.crt` a client's certificate must chain to.
 */
export const CLIENT_CA_ANNOTATION = 'npl-lb.io/client-ca';
/** On an IngressClass: the cluster's default class. */
export const DEFAULT_INGRESS_CLASS_ANNOTATION = 'ingressclass.kubernetes.io/is-default-class';

export type NplProtocol = 'tcp' | 'udp';
export type IpFamily = 'IPv4' | 'IPv6';

/** One mapping as Antrea writes it; field order is Antrea's. */
export interface NplEntry {
  podPort: number;
  nodeIP: string;
  nodePort: number;
  protocol: NplProtocol;
  ipFamily: IpFamily;
}

const port = z.number().int().min(1).max(65535);
const protocol = z.enum(['tcp', 'udp', 'sctp']);

/** Current form, and the form before Antrea 1.7 (`protocols`, one nodePort for all of them). */
const rawEntry = z
  .object({
    podPort: port,
    nodeIP: z.string().min(1),
    nodePort: port,
    protocol: protocol.optional(),
    protocols: z.array(protocol).optional(),
    ipFamily: z.enum(['IPv4', 'IPv6']).optional(),
  })
  .loose()
  .refine((e) => e.protocol !== undefined || (e.protocols?.length ?? 0) > 0, {
    message: 'protocol is missing',
  });

const rawAnnotation = z.array(z.unknown());

export type ParseResult =
  | { ok: true; entries: NplEntry[]; /** Elements that are not valid entries, in words. */ invalid: string[] }
  | { ok: false; error: string };

/**
 * Reads a Pod's NodePortLocal annotation in every form Antrea has written. SCTP entries are
 * dropped; an entry without ipFamily is IPv4. An element that is not a valid entry is reported in
 * `invalid` and the others still count; `ok` is false only when the text is not a JSON list.
 */
export function parseNplAnnotation(text: string | undefined): ParseResult {
  if (text === undefined || text === '') return { ok: true, entries: [], invalid: [] };
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    return { ok: false, error: `not JSON: ${err instanceof Error ? err.message : String(err)}` };
  }
  const parsed = rawAnnotation.safeParse(json);
  if (!parsed.success) return { ok: false, error: 'value: not a JSON list' };
  const entries: NplEntry[] = [];
  const invalid: string[] = [];
  for (const [i, item] of parsed.data.entries()) {
    const one = rawEntry.safeParse(item);
    if (!one.success) {
      const issue = one.error.issues[0]!;
      invalid.push(`entry ${i}: ${[i, ...issue.path].join('.')}: ${issue.message}`);
      continue;
    }
    const e = one.data;
    const protocols = e.protocol ? [e.protocol] : (e.protocols ?? []);
    for (const p of protocols) {
      if (p === 'sctp') continue;
      entries.push({
        podPort: e.podPort,
        nodeIP: e.nodeIP,
        nodePort: e.nodePort,
        protocol: p,
        ipFamily: e.ipFamily ?? 'IPv4',
      });
    }
  }
  return { ok: true, entries, invalid };
}

const entryKey = (e: NplEntry): string =>
  `${e.podPort}/${e.protocol}/${e.ipFamily}/${e.nodeIP}/${e.nodePort}`;

/** Antrea's JSON for a list of mappings, in a stable order. */
export function serializeNplAnnotation(entries: NplEntry[]): string {
  const sorted = [...entries].sort((a, b) =>
    entryKey(a) < entryKey(b) ? -1 : entryKey(a) > entryKey(b) ? 1 : 0,
  );
  return JSON.stringify(
    sorted.map((e) => ({
      podPort: e.podPort,
      nodeIP: e.nodeIP,
      nodePort: e.nodePort,
      protocol: e.protocol,
      ipFamily: e.ipFamily,
    })),
  );
}

/** The annotation is a set: order does not matter. */
export function sameNplEntries(a: NplEntry[], b: NplEntry[]): boolean {
  if (a.length !== b.length) return false;
  const ka = a.map(entryKey).sort();
  const kb = b.map(entryKey).sort();
  return ka.every((k, i) => k === kb[i]);
}
