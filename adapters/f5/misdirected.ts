/**
 * Misdirected requests on an HTTPS service (L7VirtualService.listenerHosts): a request whose
 * connection's TLS server name selects another listener than its Host (a client reusing a
 * connection for a name its certificate also covers) is answered 421 before any route is looked
 * at, as the model's resolveRequest says. BIG-IP: an iRule keeps the server name the handshake
 * asked (CLIENTSSL_HANDSHAKE, `SSL::sni name`) and, on each request, picks the listener of that
 * name and of the Host, each the most specific that matches (exact, then the longest wildcard,
 * then the catch-all listener, else none); different: `HTTP::respond 421`. A connection without a
 * server name is not checked. Read back from the device: the rule's place among the service's
 * iRules and its text as it would be written from the hosts noted. Pure.
 */
import type { L7VirtualService } from '../../src/model/types.ts';
import { listsIRule, tclHost } from './as3-text.ts';

type Json = Record<string, unknown>;

export const misdirectedRuleName = (vs: string): string => `${vs}_421`;

/** Most specific first: exact names, wildcards by the longest suffix; the catch-all ('') apart. */
const byRank = (a: string, b: string): number => {
  const rank = (h: string) => (h.startsWith('*.') ? h.length : 1_000_000);
  return rank(b) - rank(a) || (a < b ? -1 : 1);
};

/**
 * The switch setting `variable` to the index (in `hosts`, as given) of the listener `word`
 * selects, the most specific first (`none`: none does).
 */
function listenerSwitch(hosts: readonly string[], word: string, variable: string): string[] {
  const named = hosts.filter((h) => h !== '').sort(byRank);
  const catchAll = hosts.indexOf('');
  return [
    `    switch -glob -- ${word} {`,
    ...named.map((h) => `      ${tclHost(h, 'listener hostname')} { set ${variable} l${hosts.indexOf(h)} }`),
    `      default { set ${variable} ${catchAll >= 0 ? `l${catchAll}` : 'none'} }`,
    '    }',
  ];
}

/** The iRule answering 421 where the server name and the Host select different listeners. */
export function misdirectedRule(listenerHosts: readonly string[]): string {
  const hosts = [...new Set(listenerHosts.map((h) => h.toLowerCase()))];
  return [
    'when CLIENTSSL_HANDSHAKE {',
    '  set npl_sni [string tolower [SSL::sni name]]',
    '}',
    'when HTTP_REQUEST priority 880 {',
    '  if { [info exists npl_sni] && $npl_sni ne "" } {',
    '    set npl_host [string tolower [getfield [HTTP::host] ":" 1]]',
    ...listenerSwitch(hosts, '$npl_sni', 'npl_lsni'),
    ...listenerSwitch(hosts, '$npl_host', 'npl_lhost'),
    '    if { $npl_lsni ne $npl_lhost } { HTTP::respond 421 content "" noserver }',
    '  }',
    '}',
  ].join('\n');
}

/**
 * The listener hosts a service on the device answers misdirected requests for: those noted, when
 * its 421 iRule is listed and reads as written from them; undefined otherwise (the next pass then
 * writes it again).
 */
export function misdirectedRead(
  o: Json,
  app: Json,
  noted: string | undefined,
  vs: string,
): string[] | undefined {
  if (noted === undefined) return undefined;
  try {
    const hosts = JSON.parse(noted) as unknown;
    if (!Array.isArray(hosts) || hosts.some((h) => typeof h !== 'string')) return undefined;
    const rule = app[misdirectedRuleName(vs)] as Json | undefined;
    return listsIRule(o, misdirectedRuleName(vs)) && rule?.iRule === misdirectedRule(hosts as string[])
      ? (hosts as string[])
      : undefined;
  } catch {
    return undefined;
  }
}

/** Whether a service answers misdirected requests (an HTTPS one with its listeners' hostnames). */
export const answersMisdirected = (vs: L7VirtualService): boolean =>
  vs.protocol === 'HTTPS' && (vs.listenerHosts?.length ?? 0) > 0;
