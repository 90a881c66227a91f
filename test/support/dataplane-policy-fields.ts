/**
 * A backend's policy fields through the Data Plane API as an admin reads and edits them (the
 * contract's "changed by hand" case for the Data Plane transport): the backend's `balance`,
 * `hdr_name`, `hash_expression`, `hash_type`, `cookie` (its name and `maxlife`), `dynamic_cookie_key`, `stick_table.expire`,
 * `connect_timeout`, `server_timeout`, `retries`, `retry_on`, and its first used server's `server.maxconn`,
 * `server.slowstart`, `server.proto`; edits in a transaction of their own.
 */
import type { DataplaneClient } from '../../adapters/haproxy/dataplane/client.ts';
import type { DpBackend, DpServer } from '../../adapters/haproxy/dataplane/models.ts';
import type { PolicyRow } from '../contract/adapter-contract.ts';

const used = (s: DpServer) => s.maintenance !== 'enabled';

export async function dataplaneFields(c: DataplaneClient, name: string): Promise<Record<string, unknown>> {
  const b = (await c.backends()).find((x) => x.name === name);
  if (!b) throw new Error(`no backend ${name}`);
  const s = (await c.servers(name)).find(used);
  return {
    balance: b.balance?.algorithm,
    hdr_name: b.balance?.hdr_name,
    hash_expression: b.balance?.hash_expression,
    hash_type: b.hash_type?.method,
    cookie: b.cookie?.name,
    'cookie.maxlife': b.cookie?.maxlife,
    dynamic_cookie_key: b.dynamic_cookie_key,
    'stick_table.expire': b.stick_table?.expire,
    connect_timeout: b.connect_timeout,
    server_timeout: b.server_timeout,
    retries: b.retries,
    retry_on: b.retry_on,
    'server.maxconn': s?.maxconn,
    'server.slowstart': s?.slowstart,
    'server.proto': s?.proto,
    'server.verify': s?.verify,
    'server.verifyhost': s?.verifyhost,
    'server.ssl_cafile': s?.ssl_cafile,
  };
}

function setBackend(b: DpBackend, key: string, v: unknown): void {
  const r = b as Record<string, unknown>;
  switch (key) {
    case 'balance':
      b.balance = { algorithm: String(v) };
      return;
    case 'hdr_name':
      b.balance = { ...b.balance!, hdr_name: String(v) };
      return;
    case 'hash_type':
      if (v === undefined) delete b.hash_type;
      else b.hash_type = { method: v as 'consistent' };
      return;
    case 'cookie.maxlife':
      if (v === undefined) delete b.cookie?.maxlife;
      else b.cookie = { ...b.cookie!, maxlife: Number(v) };
      return;
    case 'stick_table.expire':
      b.stick_table = { ...b.stick_table, expire: Number(v) };
      return;
    default:
      if (v === undefined) delete r[key];
      else r[key] = v;
  }
}

export async function editDataplane(
  c: DataplaneClient,
  name: string,
  fields: Record<string, unknown>,
): Promise<void> {
  const tx = await c.startTransaction(await c.configVersion());
  const b = (await c.backends(tx)).find((x) => x.name === name)!;
  for (const [k, v] of Object.entries(fields)) {
    if (k === 'cookie' && v === undefined) delete b.cookie;
    else if (!k.startsWith('server.')) setBackend(b, k, v);
  }
  await c.putBackend(tx, b, true);
  for (const s of (await c.servers(name, tx)).filter(used)) {
    const r = s as Record<string, unknown>;
    let touched = false;
    for (const [k, v] of Object.entries(fields)) {
      if (!k.startsWith('server.')) continue;
      touched = true;
      if (v === undefined) delete r[k.slice('server.'.length)];
      else r[k.slice('server.'.length)] = v;
    }
    if (touched) await c.putServer(tx, name, s, true);
  }
  await c.commit(tx);
}

/** What each policy value is in the Data Plane API's fields, and a hand edit of it. */
export const DATAPLANE_ROWS: PolicyRow[] = [
  // TLS to the members (a BackendTLSPolicy), verified; `verify none` by hand is never read as it.
  {
    policy: {
      backendTls: { serverName: 'backend.example.com', verifyNames: ['backend.example.com'], ca: 'System' },
    },
    http: true,
    device: {
      'server.verify': 'required',
      'server.verifyhost': 'backend.example.com',
      'server.ssl_cafile': '@system-ca',
    },
    hand: { 'server.verify': 'none' },
  },
  {
    policy: { algorithm: 'LeastConnections' },
    device: { balance: 'leastconn' },
    hand: { balance: 'roundrobin' },
  },
  {
    policy: { algorithm: 'SourceHash' },
    device: { balance: 'source', hash_type: 'consistent' },
    // Still `source`, no longer consistent: a drift the model has no word for.
    hand: { hash_type: undefined },
  },
  {
    policy: { algorithm: 'HeaderHash', hashKey: 'x-user' },
    http: true,
    device: { balance: 'hdr', hdr_name: 'x-user' },
    hand: { hdr_name: 'x-other' },
  },
  {
    policy: { algorithm: 'CookieHash', hashKey: 'session_id' },
    http: true,
    device: { balance: 'hash', hash_expression: 'req.cook(session_id)' },
    hand: { balance: 'leastconn' },
  },
  {
    policy: { persistence: 'Cookie' },
    http: true,
    device: { dynamic_cookie_key: 'npl-lb' },
    hand: { cookie: undefined, dynamic_cookie_key: undefined },
  },
  // A route's session cookie (an HTTPRoute rule's sessionPersistence): its lifetime taken off by
  // hand is written again.
  {
    policy: {
      persistence: 'Cookie',
      sessionCookie: { name: 'cart-sid', absoluteSeconds: 600, permanent: true },
    },
    http: true,
    device: { cookie: 'cart-sid', 'cookie.maxlife': 600 },
    hand: { 'cookie.maxlife': undefined },
  },
  {
    policy: { persistence: 'SourceIP' },
    device: { 'stick_table.expire': 1_800_000 },
    hand: { 'stick_table.expire': 60_000 },
  },
  { policy: { maxConnections: 25 }, device: { 'server.maxconn': 25 }, hand: { 'server.maxconn': 7 } },
  {
    policy: { slowStartSeconds: 4 },
    device: { 'server.slowstart': 4000 },
    hand: { 'server.slowstart': undefined },
  },
  {
    policy: { connectTimeoutSeconds: 3 },
    device: { connect_timeout: 3000 },
    hand: { connect_timeout: 9000 },
  },
  // Not whole seconds: not what we write.
  {
    policy: { serverTimeoutSeconds: 90 },
    device: { server_timeout: 90_000 },
    hand: { server_timeout: 90_500 },
  },
  { policy: { retries: 0 }, device: { retries: 0 }, hand: { retries: 3 } },
  // A route's retries (an HTTPRoute rule's retry): taken off by hand, written again.
  {
    policy: { retries: 2, retryStatuses: [500, 503] },
    http: true,
    device: { retries: 2, retry_on: 'conn-failure empty-response 500 503' },
    hand: { retry_on: undefined },
  },
  {
    policy: { backendProtocol: 'h2c' },
    http: true,
    device: { 'server.proto': 'h2' },
    hand: { 'server.proto': undefined },
  },
  // Round robin asked, `static-rr` set by hand: read as round robin, written again all the same.
  { policy: { retries: 2 }, device: { balance: 'roundrobin', retries: 2 }, hand: { balance: 'static-rr' } },
];
