/**
 * TLS passthrough on Avi, as AKO does it: an L4 virtual service whose L4 DataScript reads the
 * ClientHello through the Default-TLS protocol parser and selects the pool group of the server
 * name, the connection staying encrypted to the backend. One pool group per SNI route
 * (`<vs>--sni-<host>`); the script tries the exact name, then wildcards from the longest suffix
 * (`*.b.example.com` before `*.example.com`: one or more labels, as the Gateway API has it), then
 * the catch-all (''), and closes a connection that matches none or sends no server name. The
 * script's only data is the table of hosts it may select, written as Lua string literals with
 * every character outside `[A-Za-z0-9.*_-]` escaped (hosts are DNS names at the validation boundary
 * already). Pure.
 */
import type { L4VirtualService } from '../../src/model/types.ts';
import { limitName } from '../../src/model/names.ts';

/** The pool group of one SNI route ('' is the catch-all, named `*any`). */
export const sniGroupName = (vs: string, host: string): string =>
  limitName(`${vs}--sni-${host === '' ? '*any' : host}`, 200);

/** A Lua string literal of any text: quotes, backslashes and anything unusual as \ddd escapes. */
export function luaString(s: string): string {
  const body = [...Buffer.from(s, 'utf8')]
    .map((b) => {
      const c = String.fromCharCode(b);
      return /[A-Za-z0-9.*_-]/.test(c) ? c : `\\${String(b).padStart(3, '0')}`;
    })
    .join('');
  return `"${body}"`;
}

/** The L4 DataScript of a passthrough virtual service. */
export function passthroughScript(vs: L4VirtualService): string {
  const hosts = [...new Set((vs.sni ?? []).map((r) => r.host))].sort();
  const groups = hosts.map((h) => `  [${luaString(h)}] = ${luaString(sniGroupName(vs.name, h))},`);
  return [
    'local avi_tls = require "Default-TLS"',
    'local groups = {',
    ...groups,
    '}',
    'local buffered = avi.l4.collect(20)',
    'local payload = avi.l4.read()',
    'local len = avi_tls.get_req_buffer_size(payload)',
    'if buffered < len then avi.l4.collect(len) payload = avi.l4.read() end',
    'local pick = nil',
    'if avi_tls.sanity_check(payload) then',
    '  local name = avi_tls.get_sni(avi_tls.parse_record(payload))',
    '  if name ~= nil then',
    '    name = string.lower(name)',
    '    pick = groups[name]',
    '    local rest = name',
    '    while pick == nil do',
    '      local dot = string.find(rest, ".", 1, true)',
    '      if dot == nil then break end',
    '      rest = string.sub(rest, dot + 1)',
    '      pick = groups["*." .. rest]',
    '    end',
    '  end',
    '  if pick == nil then pick = groups[""] end',
    'end',
    'if pick == nil then avi.vs.close_conn() else avi.poolgroup.select(pick) end',
    'avi.l4.ds_done()',
  ].join('\n');
}
