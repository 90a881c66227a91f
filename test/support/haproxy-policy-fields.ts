/**
 * A backend's policy fields in haproxy.cfg as an admin reads and edits them (the contract's
 * "changed by hand" case for the runtime transport): its lines by keyword (`balance`, `hash-type`,
 * `cookie`, `dynamic-cookie-key`, `stick-table`, `stick`, `timeout connect`, `timeout server`,
 * `retries`, `retry-on`) and its servers' words (`server maxconn`, `server slowstart`, `server proto`, and
 * TLS's `server verify`, `server verifyhost`, `server ca-file`).
 */
import type { PolicyRow } from '../contract/adapter-contract.ts';

const LINE_KEYS = [
  'timeout connect',
  'timeout server',
  'hash-type',
  'dynamic-cookie-key',
  'stick-table',
  'stick',
  'balance',
  'cookie',
  'retries',
  'retry-on',
];
const SERVER_WORDS = ['maxconn', 'slowstart', 'proto', 'verify', 'verifyhost', 'ca-file'];

/** The lines of section `backend <name>` (start and end indexes into `lines`). */
function section(lines: string[], name: string): [number, number] {
  const start = lines.findIndex((l) => l === `backend ${name}`);
  if (start < 0) throw new Error(`no backend ${name} in the file`);
  let end = start + 1;
  while (end < lines.length && (lines[end]!.startsWith(' ') || lines[end] === '')) end++;
  return [start, end];
}

const keyOf = (line: string): string | undefined =>
  LINE_KEYS.find((k) => line.trim() === k || line.trim().startsWith(`${k} `));

export function backendFields(text: string, name: string): Record<string, unknown> {
  const lines = text.split('\n');
  const [start, end] = section(lines, name);
  const out: Record<string, unknown> = {};
  for (const l of lines.slice(start + 1, end)) {
    const t = l.trim();
    if (t.startsWith('server ')) {
      for (const w of SERVER_WORDS) {
        const m = new RegExp(`\\s${w} (\\S+)`).exec(t.replace(/#.*$/, ''));
        if (m && out[`server ${w}`] === undefined) out[`server ${w}`] = m[1];
      }
      continue;
    }
    const k = keyOf(l);
    if (k) out[k] = t.slice(k.length).trim();
  }
  return out;
}

/** The file with backend `name`'s fields set (undefined: removed), as an admin would edit it. */
export function editBackend(text: string, name: string, fields: Record<string, unknown>): string {
  const lines = text.split('\n');
  const [start, end] = section(lines, name);
  let body = lines.slice(start + 1, end);
  for (const [key, value] of Object.entries(fields)) {
    if (key.startsWith('server ')) {
      const w = key.slice('server '.length);
      body = body.map((l) => {
        if (!l.trim().startsWith('server ')) return l;
        const [words, comment] = [l.replace(/\s*#.*$/, ''), /#.*$/.exec(l)?.[0] ?? ''];
        const without = words.replace(new RegExp(`\\s${w} \\S+`), '');
        return `${value === undefined ? without : `${without} ${w} ${String(value)}`} ${comment}`.trimEnd();
      });
      continue;
    }
    const at = body.findIndex((l) => keyOf(l) === key);
    if (value === undefined) {
      if (at >= 0) body.splice(at, 1);
    } else if (at >= 0) body[at] = `    ${key} ${String(value)}`;
    else body.splice(1, 0, `    ${key} ${String(value)}`);
  }
  return [...lines.slice(0, start + 1), ...body, ...lines.slice(end)].join('\n');
}

/** What each policy value is in haproxy.cfg, and a hand edit of it (rows for the runtime transport). */
export const HAPROXY_CFG_ROWS: PolicyRow[] = [
  {
    policy: { algorithm: 'LeastConnections' },
    device: { balance: 'leastconn' },
    hand: { balance: 'roundrobin' },
  },
  {
    policy: { algorithm: 'SourceHash' },
    device: { balance: 'source', 'hash-type': 'consistent' },
    // Still `balance source`, no longer consistent: a drift the model has no word for.
    hand: { 'hash-type': undefined },
  },
  {
    policy: { algorithm: 'HeaderHash', hashKey: 'x-user' },
    http: true,
    device: { balance: 'hdr(x-user)' },
    hand: { balance: 'hdr(x-other)' },
  },
  {
    policy: { algorithm: 'CookieHash', hashKey: 'session_id' },
    http: true,
    device: { balance: 'hash req.cook(session_id)' },
    hand: { balance: 'leastconn' },
  },
  {
    policy: { persistence: 'Cookie' },
    http: true,
    device: { 'dynamic-cookie-key': 'npl-lb' },
    hand: { cookie: undefined, 'dynamic-cookie-key': undefined },
  },
  // A route's session cookie (an HTTPRoute rule's sessionPersistence): its lifetime taken off by
  // hand is written again.
  {
    policy: {
      persistence: 'Cookie',
      sessionCookie: { name: 'cart-sid', absoluteSeconds: 600, permanent: true },
    },
    http: true,
    device: { cookie: 'cart-sid insert indirect nocache dynamic maxlife 600s attr "Max-Age=600"' },
    hand: { cookie: 'cart-sid insert indirect nocache dynamic' },
  },
  {
    policy: { persistence: 'SourceIP' },
    device: { stick: 'on src' },
    hand: { stick: undefined, 'stick-table': undefined },
  },
  { policy: { maxConnections: 25 }, device: { 'server maxconn': '25' }, hand: { 'server maxconn': '7' } },
  {
    policy: { slowStartSeconds: 4 },
    device: { 'server slowstart': '4s' },
    hand: { 'server slowstart': undefined },
  },
  {
    policy: { connectTimeoutSeconds: 3 },
    device: { 'timeout connect': '3s' },
    hand: { 'timeout connect': '9s' },
  },
  // Milliseconds without a unit: the same time, not the line we write.
  {
    policy: { serverTimeoutSeconds: 90 },
    device: { 'timeout server': '90s' },
    hand: { 'timeout server': '90000' },
  },
  { policy: { retries: 0 }, device: { retries: '0' }, hand: { retries: '3' } },
  // A route's retries (an HTTPRoute rule's retry): the statuses dropped by hand are written again.
  {
    policy: { retries: 2, retryStatuses: [500, 503] },
    http: true,
    device: { retries: '2', 'retry-on': 'conn-failure empty-response 500 503' },
    hand: { 'retry-on': 'conn-failure' },
  },
  {
    policy: { backendProtocol: 'h2c' },
    http: true,
    device: { 'server proto': 'h2' },
    hand: { 'server proto': undefined },
  },
  // TLS to the members (a BackendTLSPolicy), verified; `verify none` by hand is never read as it.
  {
    policy: {
      backendTls: { serverName: 'backend.example.com', verifyNames: ['backend.example.com'], ca: 'System' },
    },
    http: true,
    device: {
      'server verify': 'required',
      'server verifyhost': 'backend.example.com',
      'server ca-file': '@system-ca',
    },
    hand: { 'server verify': 'none' },
  },
  // Round robin asked, `static-rr` set by hand: read as round robin, written again all the same.
  { policy: { retries: 2 }, device: { balance: 'roundrobin', retries: '2' }, hand: { balance: 'static-rr' } },
];
