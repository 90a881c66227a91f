/**
 * The model <-> Data Plane API mapping, pure. A pool is a backend with a fixed set of server
 * slots: members fill slots, and a slot that loses its member goes into maintenance and waits for
 * the next one, so scaling only changes a server's address, port, weight and maintenance state
 * (runtime changes, no reload). Slots come in steps of `slots`; running out adds a step (one
 * reload). A slot is named `s<k>_<node>` after the node of the member it was made for, and a new
 * member prefers a free slot named for its own node, so the names show which node serves; v3
 * also records node and Pod in each server's metadata (server-slots.ts). What HAProxy has no field
 * for (the Service) is in the backend's `description`, as `k=v` words. Frontends:
 * frontend-layout.ts.
 */
import type { Member, Pool } from '../../../src/model/types.ts';
import { policyWords, readStoredCheck, storeCheck, storedPolicy } from '../../../src/adapter/stored-check.ts';
import { readDataplanePolicy } from './policy-read.ts';
import { COOKIE_KEY, hashed, persistenceCookie, retryOn } from '../policy-lines.ts';
import { enc } from '../config.ts';
import { statusList } from '../../../src/model/status-ranges.ts';
import { logFormatArg, quoteArg } from '../encode.ts';
import { ROUTE_TIMEOUT_VAR } from '../http-routes.ts';
import type { DpBackend, DpHttpCheck, DpHttpRule, DpServer, DpStickRule } from './models.ts';
import { isFree, META_KEY, memberKey, slotNode } from './server-slots.ts';

export { assignSlots, memberKey, serverChanged, type SlotParams, slotNode } from './server-slots.ts';

export type { LayoutOptions } from './layout-options.ts';
import type { LayoutOptions } from './layout-options.ts';

export interface DeviceBackend {
  backend: DpBackend;
  servers: DpServer[];
  /** Node and Pod per member address:port as last applied (v2 servers have no metadata). */
  known?: Map<string, { node: string; pod: string }>;
}

/** The `k=v` words of a description, values still encoded (lists split before decoding). */
export function words(text: string | undefined): Record<string, string> {
  return Object.fromEntries([...(text ?? '').matchAll(/(\w+)=(\S*)/g)].map((m) => [m[1]!, m[2]!]));
}
export const dec = (v: string | undefined): string | undefined =>
  v === undefined ? undefined : decodeURIComponent(v);

/** Who owns a backend or frontend: the `owner=` of our description, else the name's prefix. */
export function ownerOf(s: { name: string; description?: string | undefined }): string {
  const d = s.description ?? '';
  if (d.startsWith('npl-lb ')) {
    const o = dec(words(d).owner);
    if (o !== undefined) return o;
  }
  return s.name.includes('--') ? s.name.split('--')[0]! : 'unknown';
}

/** v2 has no server metadata: the backend's description lists node and Pod per member. */
function membersWord(members: Member[]): string {
  return members.map((m) => [m.address, String(m.port), m.node, m.pod].map(enc).join(':')).join(',');
}

function parseMembersWord(word: string | undefined): Map<string, { node: string; pod: string }> {
  const out = new Map<string, { node: string; pod: string }>();
  for (const item of (word ?? '').split(',').filter(Boolean)) {
    const [address, port, node, pod] = item.split(':').map((x) => decodeURIComponent(x));
    out.set(`${address}:${port}`, { node: node ?? '', pod: pod ?? '' });
  }
  return out;
}

/**
 * A pool's `http-check` rules (the backend's http_checks list): the check's headers as a `send`
 * (each value one log-format argument), its statuses as an `expect status`; none without them.
 */
export function httpChecksFor(p: Pool, o: LayoutOptions): DpHttpCheck[] {
  const c = o.healthChecks ? p.check : undefined;
  if (!c) return [];
  return [
    ...(c.headers?.length
      ? [
          {
            type: 'send' as const,
            headers: c.headers.map((h) => ({ name: quoteArg(h.name), fmt: logFormatArg(h.value) })),
          },
        ]
      : []),
    ...(c.expect
      ? [{ type: 'expect' as const, match: 'status' as const, pattern: statusList(c.expect) }]
      : []),
  ];
}

/**
 * An HTTP backend's http-request rules: the server timeout a Gateway API route set for the request
 * (the frontend's `set-var`, http-routes.ts), applied where the variable is set. Every HTTP
 * backend has it (harmless unset), so a route that gains a timeout never waits on its pools.
 */
export const backendRequestRulesFor = (p: Pool, http: boolean): DpHttpRule[] =>
  http || p.backendProtocol === 'h2c'
    ? [
        {
          type: 'set-timeout',
          timeout_type: 'server',
          timeout: `var(${ROUTE_TIMEOUT_VAR})`,
          cond: 'if',
          cond_test: `{ var(${ROUTE_TIMEOUT_VAR}) -m found }`,
        },
      ]
    : [];

/** A pool's stick rules (the backend's stick_rules list): `stick on src` for SourceIP persistence. */
export const stickRulesFor = (p: Pool): DpStickRule[] =>
  p.persistence === 'SourceIP' ? [{ type: 'on', pattern: 'src' }] : [];

export function backendFor(p: Pool, http: boolean, o: LayoutOptions): DpBackend {
  const words = [
    'npl-lb',
    'pool',
    `owner=${enc(o.owner)}`,
    `service=${enc(p.service)}`,
    `port=${enc(p.servicePort)}`,
    `protocol=${p.protocol}`,
    `health=${p.health}`,
    ...(p.check ? [`check=${enc(storeCheck(p.check))}`] : []),
    ...policyWords(p),
    ...(o.apiVersion === 'v2' && p.members.length > 0 ? [`members=${membersWord(p.members)}`] : []),
    // Its http-request rules carry route timeouts (backendRequestRulesFor): a backend written
    // before them differs here, and is written again with them.
    ...(http || p.backendProtocol === 'h2c' ? ['rules=timeout'] : []),
  ];
  // The application's HTTP check (its readiness probe): HAProxy's httpchk expects a 2xx or 3xx
  // status, the kubelet's rule. Without one the servers' check is a TCP connect.
  const c = o.healthChecks ? p.check : undefined;
  return {
    name: p.name,
    // An HTTP/2 pool is an HTTP backend even while no route sends to it (`proto h2` needs one).
    mode: http || p.backendProtocol === 'h2c' ? 'http' : 'tcp',
    // The pool's BackendPolicy, as the runtime transport writes it (policy-lines.ts balanceLines).
    balance:
      p.algorithm === 'HeaderHash'
        ? { algorithm: 'hdr', hdr_name: p.hashKey ?? '' }
        : p.algorithm === 'CookieHash'
          ? { algorithm: 'hash', hash_expression: `req.cook(${p.hashKey ?? ''})` }
          : {
              algorithm:
                p.algorithm === 'LeastConnections'
                  ? 'leastconn'
                  : p.algorithm === 'SourceHash'
                    ? 'source'
                    : 'roundrobin',
            },
    ...(hashed(p) ? { hash_type: { method: 'consistent' } } : {}),
    ...(p.persistence === 'Cookie' && http
      ? {
          // A route's session cookie: its name, `maxlife` and a Permanent cookie's Max-Age (the
          // runtime transport's cookieWords, as the cookie model's fields).
          cookie: {
            name: p.sessionCookie?.name ?? persistenceCookie(p.name),
            type: 'insert',
            indirect: true,
            nocache: true,
            dynamic: true,
            ...(p.sessionCookie?.absoluteSeconds ? { maxlife: p.sessionCookie.absoluteSeconds } : {}),
            ...(p.sessionCookie?.permanent && p.sessionCookie.absoluteSeconds
              ? { attr: [{ value: `Max-Age=${p.sessionCookie.absoluteSeconds}` }] }
              : {}),
          },
          dynamic_cookie_key: COOKIE_KEY,
        }
      : {}),
    // SourceIP persistence: the clients' addresses for 30 minutes, as the runtime transport keeps
    // them (`stick-table type ip size 100k expire 30m`), with the backend's `stick on src` rule.
    ...(p.persistence === 'SourceIP'
      ? { stick_table: { type: 'ip', size: 102_400, expire: 1_800_000 } }
      : {}),
    // The BackendPolicy's member timeouts, in milliseconds as the model counts them.
    ...(p.connectTimeoutSeconds ? { connect_timeout: p.connectTimeoutSeconds * 1000 } : {}),
    ...(p.serverTimeoutSeconds ? { server_timeout: p.serverTimeoutSeconds * 1000 } : {}),
    // Retries of a failed connection (the defaults section redispatches them to another server).
    ...(p.retries !== undefined ? { retries: p.retries } : {}),
    // A route's retries: what they are sent again on (the runtime transport's `retry-on` words).
    ...(p.retryStatuses ? { retry_on: retryOn(p.retryStatuses) } : {}),
    ...(c
      ? {
          adv_check: 'httpchk',
          httpchk_params: { method: c.method ?? 'GET', uri: c.path },
          check_timeout: c.timeoutSeconds * 1000,
        }
      : {}),
    description: words.join(' '),
  };
}

/** Whether a backend must be written: anything but v2's member list differs. */
export function backendChanged(current: DpBackend, wanted: DpBackend): boolean {
  const strip = (b: DpBackend) => ({
    mode: b.mode,
    balance: b.balance
      ? [b.balance.algorithm, b.balance.hdr_name ?? null, b.balance.hash_expression ?? null]
      : null,
    hash: b.hash_type?.method ?? null,
    cookie: b.cookie
      ? [
          b.cookie.name,
          b.cookie.type,
          b.cookie.dynamic,
          b.dynamic_cookie_key,
          b.cookie.maxlife ?? null,
          (b.cookie.attr ?? []).map((a) => a.value),
        ]
      : null,
    adv_check: b.adv_check,
    httpchk: b.httpchk_params ? [b.httpchk_params.method, b.httpchk_params.uri] : null,
    check_timeout: b.check_timeout ?? null,
    stick_table: b.stick_table ? [b.stick_table.type, b.stick_table.size, b.stick_table.expire] : null,
    connect_timeout: b.connect_timeout ?? null,
    server_timeout: b.server_timeout ?? null,
    retries: b.retries ?? null,
    retry_on: b.retry_on ?? null,
    description: (b.description ?? '').replace(/ members=\S*/, ''),
  });
  return JSON.stringify(strip(current)) !== JSON.stringify(strip(wanted));
}

/**
 * A backend read back as a pool (members: the servers not in maintenance), its policy from the
 * backend's and servers' own fields (policy-read.ts); `exact: false` when they are not what
 * `backendFor` writes.
 */
export function readPoolExact(d: DeviceBackend): { pool: Pool; exact: boolean } {
  const meta = words(d.backend.description);
  const v2Members = parseMembersWord(meta.members);
  const used = d.servers.filter((s) => !isFree(s));
  const members: Member[] = used.map((s) => {
    const recorded = s.metadata?.[META_KEY] as { node?: unknown; pod?: unknown } | undefined;
    const listed = d.known?.get(memberKey(s)) ?? v2Members.get(memberKey(s));
    return {
      address: s.address,
      port: s.port ?? 0,
      node: typeof recorded?.node === 'string' ? recorded.node : (listed?.node ?? slotNode(s.name)),
      pod: typeof recorded?.pod === 'string' ? recorded.pod : (listed?.pod ?? ''),
      enabled: (s.weight ?? 1) > 0,
    };
  });
  const { policy, exact } = readDataplanePolicy(d.backend, used, storedPolicy(meta));
  return {
    pool: {
      name: d.backend.name,
      protocol: meta.protocol === 'UDP' ? 'UDP' : 'TCP',
      health: meta.health === 'http' ? 'http' : meta.health === 'udp' ? 'udp' : 'tcp',
      ...readStoredCheck(dec(meta.check)),
      ...policy,
      members,
      service: dec(meta.service) ?? '',
      servicePort: dec(meta.port) ?? '',
    },
    exact,
  };
}

/** A backend read back as a pool. */
export const readPool = (d: DeviceBackend): Pool => readPoolExact(d).pool;
