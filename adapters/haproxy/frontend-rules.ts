/**
 * What a Gateway API frontend's rules are made of, independent of the transport, and the rules
 * that run before any route: a request whose TLS server name and Host select different HTTPS
 * listeners answered 421, and a verified client's subject passed on in a header. Hosts match as
 * the model says (http-match.ts): exact, then the longest wildcard (one or more labels), then any.
 * Pure.
 */
import type { L7VirtualService } from '../../src/model/types.ts';
import { quoteArg } from './encode.ts';

/**
 * What a frontend's routes become, independent of the transport: the runtime transport writes
 * these as haproxy.cfg lines (ruleLines), the Data Plane transport as the API's ACL, rule and
 * switching-rule objects (dataplane/route-layout.ts). Header names and values, paths and Locations
 * are already quoted arguments; a condition is a list of ACL names (AND).
 */
export interface Acl {
  name: string;
  criterion: string;
  value: string;
}
export type HttpAction =
  | { type: 'set-var'; name: string; expr: string }
  | { type: 'set-header' | 'add-header'; header: string; fmt: string }
  | { type: 'del-header'; header: string }
  | { type: 'redirect'; location: string; code: number }
  | { type: 'set-path'; fmt: string }
  /** Wait for the request's body (mirrors.ts), at most `ms`. */
  | { type: 'wait-for-body'; ms: number }
  /** A Lua action of ours (mirrors.ts) with its one argument. */
  | { type: 'lua'; name: string; params: string }
  /** `hdrs`: headers of the answer (quoted names, log-format values); with them it has an empty body. */
  | { type: 'return'; status: number; hdrs?: { name: string; fmt: string }[] };
export interface HttpRule {
  action: HttpAction;
  cond: string;
}
export interface SwitchRule {
  backend: string;
  cond: string;
}
export interface GatewayRules {
  acls: Acl[];
  request: HttpRule[];
  response: HttpRule[];
  switching: SwitchRule[];
}

/** Rank of a route host for a request it matches: exact over wildcard (longer first) over any. */
export const hostRank = (h: string): number => (h === '' ? 0 : h.startsWith('*.') ? h.length : 1_000_000);

export function hostAcl(h: string, fetch = 'hdr(host),field(1,:),lower'): string {
  if (!h.startsWith('*.')) return `${fetch} -m str ${quoteArg(h)}`;
  const suffix = h.slice(1).replace(/[.+?^${}()|[\]\\*]/g, '\\$&');
  return `${fetch} -m reg ${quoteArg(`^.+${suffix}$`)}`;
}

/**
 * Misdirected requests (L7VirtualService.listenerHosts): the listener the TLS server name selects
 * and the one the Host selects, each the most specific that matches (http-match.ts listenerOf),
 * kept in `txn.npl_lsni` and `txn.npl_lhost` (`none` where none does); a request on a connection
 * with a server name whose two differ is answered 421 before any route is looked at.
 */
export function misdirectedRules(v: L7VirtualService, out: GatewayRules): HttpRule[] {
  const hosts = [...(v.listenerHosts ?? [])].sort((a, b) => hostRank(b) - hostRank(a) || (a < b ? -1 : 1));
  if (hosts.length === 0) return [];
  const rules: HttpRule[] = [];
  for (const [which, fetch, always] of [
    ['sni', 'ssl_fc_sni,lower', '{ ssl_fc_sni -m found }'],
    ['host', 'hdr(host),field(1,:),lower', ''],
  ] as const) {
    const name = `txn.npl_l${which}`;
    hosts.forEach((h, i) => {
      const matches = h === '' ? always : `l${i}_${which}`;
      if (h !== '') {
        const [criterion, ...value] = hostAcl(h, fetch).split(' ');
        out.acls.push({ name: matches, criterion: criterion!, value: value.join(' ') });
      }
      rules.push({
        action: { type: 'set-var', name, expr: `str(l${i})` },
        cond: [`!{ var(${name}) -m found }`, matches].filter(Boolean).join(' '),
      });
    });
    rules.push({ action: { type: 'set-var', name, expr: 'str(none)' }, cond: `!{ var(${name}) -m found }` });
  }
  rules.push({
    action: { type: 'return', status: 421 },
    cond: '{ ssl_fc_sni -m found } !{ var(txn.npl_lsni),strcmp(txn.npl_lhost) eq 0 }',
  });
  // A host asking client certificates (hostClientValidation) is never reached over a handshake
  // without a server name either: that one asked nothing. Nor over a TLS session resumed without
  // a verified certificate: TLS 1.3 resumes a session of another host's name under this one's
  // (the crt-list lines share the bind's session cache), and a resumption asks nothing again.
  const asking = new Set((v.hostClientValidation ?? []).map((h) => h.host));
  hosts.forEach((h, i) => {
    if (!asking.has(h)) return;
    const here = `{ var(txn.npl_lhost) -m str l${i} }`;
    for (const cond of [
      `!{ ssl_fc_sni -m found } ${here}`,
      `{ ssl_fc_is_resumed } ${here} !{ ssl_c_used }`,
      `{ ssl_fc_is_resumed } ${here} !{ ssl_c_verify 0 }`,
    ])
      rules.push({ action: { type: 'return', status: 421 }, cond });
  });
  return rules;
}

/**
 * A verified client's subject to members (ClientValidation.subjectHeader): the header as the
 * client sent it removed, then set to the certificate's subject DN where one was presented and
 * verified (with the insecure fallback, an unverified client gets none).
 */
export function clientSubjectRules(v: L7VirtualService): HttpRule[] {
  const name = v.clientValidation?.subjectHeader;
  if (name === undefined) return [];
  return [
    { action: { type: 'del-header', header: quoteArg(name) }, cond: '' },
    {
      action: { type: 'set-header', header: quoteArg(name), fmt: '%[ssl_c_s_dn]' },
      cond: '{ ssl_c_used } { ssl_c_verify 0 }',
    },
  ];
}
