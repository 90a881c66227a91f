/**
 * An Avi pool's policy fields as an admin reads and edits them on the controller (the contract's
 * "changed by hand" case for Avi): `lb_algorithm`, `lb_algorithm_hash`,
 * `lb_algorithm_consistent_hash_hdr`, the persistence profile by name, the connection limit, ramp
 * and server timeout, `server_reselect`, `enable_http2`, and TLS to members (the SNI, the names
 * checked, and the CA certificates of the pool's PKI profile, `pki.ca`), and a route's session
 * cookie (the pool's own persistence profile, `session.cookie`).
 */
import type { AviSimulator } from '../../sim/avi/simulator.ts';
import { caBundle } from '../../src/source/gateway/backend-tls.ts';
import type { PolicyRow } from '../contract/adapter-contract.ts';
import { testAuthority } from './certs.ts';
import { persistenceCookie } from '../../src/model/persistence.ts';
import { cookieWord } from './model.ts';

type Json = Record<string, unknown>;

const lastSegment = (ref: unknown) => (typeof ref === 'string' ? ref.split('/').pop() : undefined);

function profileName(sim: AviSimulator, ref: unknown): string | undefined {
  const uuid = lastSegment(ref);
  if (!uuid) return undefined;
  for (const o of sim.objects('applicationpersistenceprofile').values())
    if (o.uuid === uuid) return String(o.name);
  return `(unknown ${uuid})`;
}

function pool(sim: AviSimulator, name: string): Json {
  const p = sim.objects('pool').get(name);
  if (!p) throw new Error(`no pool ${name}`);
  return p;
}

export function aviFields(sim: AviSimulator, name: string): Record<string, unknown> {
  const p = pool(sim, name);
  const reselect = p.server_reselect as { enabled?: unknown; num_retries?: unknown } | undefined;
  return {
    lb_algorithm: p.lb_algorithm,
    lb_algorithm_hash: p.lb_algorithm_hash,
    lb_algorithm_consistent_hash_hdr: p.lb_algorithm_consistent_hash_hdr,
    persistence_profile: profileName(sim, p.application_persistence_profile_ref),
    max_concurrent_connections_per_server: p.max_concurrent_connections_per_server,
    connection_ramp_duration: p.connection_ramp_duration,
    server_timeout: p.server_timeout,
    'server_reselect.enabled': reselect?.enabled,
    'server_reselect.num_retries': reselect?.num_retries,
    'server_reselect.svr_resp_code': (p.server_reselect as Json | undefined)?.svr_resp_code,
    enable_http2: p.enable_http2,
    sni_enabled: p.sni_enabled,
    server_name: p.server_name,
    host_check_enabled: p.host_check_enabled,
    domain_name: p.domain_name,
    'session.cookie': sessionOf(sim, name, p),
    'pki.ca': pkiOf(sim, p)
      ?.ca_certs?.map((c) => c.certificate)
      .join('\n'),
  };
}

function pkiOf(sim: AviSimulator, p: Json): { ca_certs?: { certificate: string }[] } | undefined {
  const uuid = lastSegment(p.pki_profile_ref);
  return [...sim.objects('pkiprofile').values()].find((o) => o.uuid === uuid) as
    { ca_certs?: { certificate: string }[] } | undefined;
}

/** The pool's own session profile (a route's session cookie), if the pool refers to it. */
function sessionProfile(sim: AviSimulator, name: string, p: Json): Json | undefined {
  const uuid = lastSegment(p.application_persistence_profile_ref);
  const o = [...sim.objects('applicationpersistenceprofile').values()].find((x) => x.uuid === uuid);
  return o?.name === `${name}-session` ? o : undefined;
}

/** `<cookie> <minutes> <persistent|session>`, from the pool's own session profile. */
function sessionOf(sim: AviSimulator, name: string, p: Json): string | undefined {
  const c = sessionProfile(sim, name, p)?.http_cookie_persistence_profile as Json | undefined;
  if (!c) return undefined;
  return `${cookieWord(name, c.cookie_name)} ${String(c.timeout)} ${c.is_persistent_cookie === true ? 'persistent' : 'session'}`;
}

/** Edits the stored pool in place, as the controller's UI would, with a new `_last_modified`. */
export function editAvi(sim: AviSimulator, name: string, fields: Record<string, unknown>): void {
  const p = pool(sim, name);
  for (const [k, v] of Object.entries(fields)) {
    if (k === 'persistence_profile') {
      const profile = [...sim.objects('applicationpersistenceprofile').values()].find((o) => o.name === v);
      if (v === undefined) delete p.application_persistence_profile_ref;
      else p.application_persistence_profile_ref = String(profile!.url);
    } else if (k === 'pki.ca') {
      // The PKI profile's CAs replaced by hand (a CA the policy does not name trusted).
      const pki = pkiOf(sim, p) as Json;
      pki.ca_certs = [{ certificate: v }];
      pki._last_modified = String(Date.now() * 1000 + 999);
    } else if (k === 'session.cookie') {
      // The session profile's cookie edited on the controller, as its UI would.
      const profile = sessionProfile(sim, name, p)!;
      const [cookie, minutes, kind] = String(v).split(' ');
      profile.http_cookie_persistence_profile = {
        ...(profile.http_cookie_persistence_profile as Json),
        cookie_name: cookie === 'own' ? persistenceCookie(name) : cookie,
        timeout: Number(minutes),
        is_persistent_cookie: kind === 'persistent',
      };
      profile._last_modified = String(Date.now() * 1000 + 999);
    } else if (k.startsWith('server_reselect.')) {
      p.server_reselect = { ...(p.server_reselect as Json), [k.slice('server_reselect.'.length)]: v };
    } else if (v === undefined) delete p[k];
    else p[k] = v;
  }
  p._last_modified = String(Date.now() * 1000 + 999);
}

/** The CA a TLS pool trusts, and another one an admin puts in its place (the boundary's form). */
const pemOf = async (name: string) => {
  const b = caBundle((await testAuthority(name)).cert);
  if (!('pem' in b)) throw new Error(b.problem);
  return b.pem;
};
const [CA, OTHER_CA] = [await pemOf('npl-lb contract CA'), await pemOf('someone else')];
const tls = {
  serverName: 'backend.example.com',
  verifyNames: ['backend.example.com', 'alt.example.com'],
  ca: CA,
};

/** What each policy value is in Avi's pool fields, and a hand edit of it. */
export const AVI_ROWS: PolicyRow[] = [
  {
    policy: { algorithm: 'LeastConnections' },
    device: { lb_algorithm: 'LB_ALGORITHM_LEAST_CONNECTIONS' },
    hand: { lb_algorithm: 'LB_ALGORITHM_ROUND_ROBIN' },
  },
  {
    policy: { algorithm: 'SourceHash' },
    device: {
      lb_algorithm: 'LB_ALGORITHM_CONSISTENT_HASH',
      lb_algorithm_hash: 'LB_ALGORITHM_CONSISTENT_HASH_SOURCE_IP_ADDRESS',
    },
    hand: { lb_algorithm_hash: 'LB_ALGORITHM_CONSISTENT_HASH_URI' },
  },
  {
    policy: { algorithm: 'HeaderHash', hashKey: 'x-user' },
    http: true,
    device: { lb_algorithm_consistent_hash_hdr: 'x-user' },
    hand: { lb_algorithm_consistent_hash_hdr: 'x-other' },
  },
  {
    policy: { persistence: 'Cookie' },
    http: true,
    device: { persistence_profile: 'System-Persistence-Http-Cookie' },
    hand: { persistence_profile: undefined },
  },
  {
    policy: { persistence: 'SourceIP' },
    device: { persistence_profile: 'System-Persistence-Client-IP' },
    hand: { persistence_profile: 'System-Persistence-Http-Cookie' },
  },
  {
    policy: { maxConnections: 25 },
    device: { max_concurrent_connections_per_server: 25 },
    hand: { max_concurrent_connections_per_server: 7 },
  },
  {
    policy: { slowStartSeconds: 120 },
    device: { connection_ramp_duration: 2 },
    hand: { connection_ramp_duration: 0 },
  },
  {
    policy: { serverTimeoutSeconds: 90 },
    device: { server_timeout: 90_000 },
    hand: { server_timeout: 5000 },
  },
  {
    policy: { retries: 0 },
    http: true,
    device: { 'server_reselect.enabled': false },
    hand: { 'server_reselect.enabled': true, 'server_reselect.num_retries': 4 },
  },
  // A route's retries (an HTTPRoute rule's retry): a status dropped by hand is written again.
  {
    policy: { retries: 2, retryStatuses: [502, 503] },
    http: true,
    device: {
      'server_reselect.enabled': true,
      'server_reselect.num_retries': 2,
      'server_reselect.svr_resp_code': {
        ranges: [
          { begin: 502, end: 502 },
          { begin: 503, end: 503 },
        ],
      },
    },
    hand: { 'server_reselect.svr_resp_code': { ranges: [{ begin: 502, end: 502 }] } },
  },
  {
    policy: { backendProtocol: 'h2c' },
    http: true,
    device: { enable_http2: true },
    hand: { enable_http2: false },
  },
  // TLS to the members: the SNI, the names checked and the PKI profile's CAs; a name check turned
  // off by hand, or another CA trusted by hand, is written again.
  {
    policy: { backendTls: tls },
    http: true,
    device: {
      sni_enabled: true,
      server_name: 'backend.example.com',
      host_check_enabled: true,
      domain_name: ['backend.example.com', 'alt.example.com'],
      'pki.ca': CA.trim(),
    },
    hand: { host_check_enabled: false },
  },
  {
    policy: { backendTls: { ...tls, verifyNames: ['alt.example.com'] } },
    http: true,
    device: { server_name: 'backend.example.com', domain_name: ['alt.example.com'] },
    hand: { server_name: 'evil.example.com' },
  },
  {
    policy: { backendTls: { ...tls, verifyNames: ['backend.example.com'] } },
    http: true,
    device: { domain_name: ['backend.example.com'], 'pki.ca': CA.trim() },
    hand: { 'pki.ca': OTHER_CA.trim() },
  },
  // A route's session cookie (an HTTPRoute rule's sessionPersistence): the pool's own profile; a
  // lifetime, a kind or a name changed by hand on it is written again.
  {
    policy: {
      persistence: 'Cookie',
      sessionCookie: { name: 'cart-sid', absoluteSeconds: 600, permanent: true },
    },
    http: true,
    device: { 'session.cookie': 'cart-sid 10 persistent' },
    hand: { 'session.cookie': 'cart-sid 20 persistent' },
  },
  {
    policy: {
      persistence: 'Cookie',
      sessionCookie: { name: 'sid', absoluteSeconds: 3600, permanent: true },
    },
    http: true,
    device: { 'session.cookie': 'sid 60 persistent' },
    hand: { 'session.cookie': 'sid 60 session' },
  },
  {
    policy: { persistence: 'Cookie', sessionCookie: {} },
    http: true,
    device: { 'session.cookie': 'own 0 session' },
    hand: { 'session.cookie': 'someone-else 0 session' },
  },
  // Round robin asked, another algorithm set by hand that the model has no word for.
  {
    policy: { maxConnections: 5 },
    device: { lb_algorithm: 'LB_ALGORITHM_ROUND_ROBIN' },
    hand: { lb_algorithm: 'LB_ALGORITHM_FASTEST_RESPONSE' },
  },
];
