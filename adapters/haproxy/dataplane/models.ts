/**
 * The HAProxy Data Plane API objects npl-lb reads and writes, as zod schemas: the subset of the
 * v2 and v3 specs (bundled with the tests in `test/support/specs/haproxy/`) used by the adapter and
 * served by the simulator.
 * Objects are loose: fields outside the subset pass through untouched.
 */
import { z } from 'zod';

const word = z.string().regex(/^[^\s]+$/, 'must not contain white space');
const sectionName = z.string().regex(/^[A-Za-z0-9-_.:]+$/, 'must match ^[A-Za-z0-9-_.:]+$');
const toggle = z.enum(['enabled', 'disabled']);
/** v3 metadata: a map of objects, kept by the Data Plane API as a comment next to the line. */
const metadata = z.record(z.string(), z.record(z.string(), z.unknown()));

export const dpServerSchema = z
  .object({
    name: word,
    address: word,
    port: z.number().int().min(1).max(65535).optional(),
    check: toggle.optional(),
    inter: z.number().int().min(1).optional(),
    rise: z.number().int().min(1).optional(),
    fall: z.number().int().min(1).optional(),
    // The server_params model spells it with a hyphen; `verify none` covers the check's TLS too.
    'check-ssl': toggle.optional(),
    verify: z.enum(['none', 'required']).optional(),
    maxconn: z.number().int().min(0).optional(),
    // Milliseconds (the model's duration unit).
    slowstart: z.number().int().min(0).optional(),
    // The protocol spoken to the server (`h2`: HTTP/2 with prior knowledge).
    proto: word.optional(),
    // TLS to the server (a BackendTLSPolicy): the CA file, the SNI expression, the name verified.
    ssl: toggle.optional(),
    ssl_cafile: word.optional(),
    // The certificate presented to the server (a Gateway's backend client certificate): a stored file.
    ssl_certificate: word.optional(),
    sni: word.optional(),
    verifyhost: z.string().optional(),
    'check-sni': word.optional(),
    // A PROXY v2 header before the stream (Mixed mode's loop server: the client's address carried).
    'send-proxy-v2': toggle.optional(),
    maintenance: toggle.optional(),
    weight: z.number().int().min(0).max(256).optional(),
    metadata: metadata.optional(),
  })
  .loose();
export type DpServer = z.infer<typeof dpServerSchema>;

/**
 * A backend's `http-check` rule (the http_check model): `send` with headers (each a name and a
 * log-format value) or `expect` of a status list. The fields npl-lb writes; others read back loose.
 */
export const dpHttpCheckSchema = z
  .object({
    type: z.enum(['send', 'expect']),
    headers: z.array(z.object({ name: z.string(), fmt: z.string() }).loose()).optional(),
    match: z.enum(['status', 'rstatus']).optional(),
    pattern: z.string().optional(),
    index: z.number().int().optional(),
  })
  .loose();
export type DpHttpCheck = z.infer<typeof dpHttpCheckSchema>;

/** A backend's `stick` rule (the stick_rule model): `on src` keeps a client on its server. */
export const dpStickRuleSchema = z
  .object({
    type: z.enum(['match', 'on', 'store-request', 'store-response']),
    pattern: word,
    table: word.optional(),
    index: z.number().int().optional(),
  })
  .loose();
export type DpStickRule = z.infer<typeof dpStickRuleSchema>;

export const dpBackendSchema = z
  .object({
    name: sectionName,
    /** The config_stick_table model: a table of client addresses, `expire` in milliseconds. */
    stick_table: z
      .object({
        type: z.enum(['ip', 'ipv6', 'integer', 'string', 'binary']).optional(),
        size: z.number().int().min(1).optional(),
        expire: z.number().int().min(1).optional(),
      })
      .loose()
      .optional(),
    mode: z.enum(['http', 'tcp', 'log']).optional(),
    balance: z
      .object({
        algorithm: z.string(),
        hdr_name: z.string().optional(),
        hash_expression: z.string().optional(),
      })
      .loose()
      .optional(),
    hash_type: z
      .object({ method: z.enum(['map-based', 'consistent']).optional() })
      .loose()
      .optional(),
    cookie: z
      .object({
        name: z.string().regex(/^[^\s]+$/),
        type: z.enum(['rewrite', 'insert', 'prefix']).optional(),
        indirect: z.boolean().optional(),
        nocache: z.boolean().optional(),
        dynamic: z.boolean().optional(),
        maxlife: z.number().int().min(0).optional(),
        attr: z.array(z.object({ value: z.string().regex(/^[^\s]+$/) }).loose()).optional(),
      })
      .loose()
      .optional(),
    dynamic_cookie_key: z
      .string()
      .regex(/^[^\s]+$/)
      .optional(),
    adv_check: z.string().optional(),
    httpchk_params: z
      .object({ method: z.string().optional(), uri: z.string().optional() })
      .loose()
      .optional(),
    check_timeout: z.number().int().min(0).optional(),
    connect_timeout: z.number().int().min(0).optional(),
    server_timeout: z.number().int().min(0).optional(),
    retries: z.number().int().min(0).optional(),
    retry_on: z.string().optional(),
    description: z.string().optional(),
    metadata: metadata.optional(),
  })
  .loose();
export type DpBackend = z.infer<typeof dpBackendSchema>;

export const dpFrontendSchema = z
  .object({
    name: sectionName,
    mode: z.enum(['http', 'tcp']).optional(),
    default_backend: sectionName.optional(),
    maxconn: z.number().int().min(1).optional(),
    client_timeout: z.number().int().min(0).optional(),
    description: z.string().optional(),
    metadata: metadata.optional(),
  })
  .loose();
export type DpFrontend = z.infer<typeof dpFrontendSchema>;

export const dpBindSchema = z
  .object({
    name: word,
    address: word.optional(),
    port: z.number().int().min(1).max(65535).optional(),
    transparent: z.boolean().optional(),
    /** A PROXY header expected first (Mixed mode's loop bind). */
    accept_proxy: z.boolean().optional(),
    ssl: z.boolean().optional(),
    /** The crt-list file (a path the storage endpoints gave). */
    crt_list: z.string().optional(),
    /** The protocols ALPN offers on an ssl bind (`h2,http/1.1`). */
    alpn: word.optional(),
    /** Client certificates: the CA file they must chain to, and whether one is required. */
    ssl_cafile: word.optional(),
    verify: z.enum(['none', 'optional', 'required']).optional(),
    /** `all` with the insecure fallback: a certificate that does not verify still connects. */
    ca_ignore_err: word.optional(),
    crt_ignore_err: word.optional(),
  })
  .loose();
export type DpBind = z.infer<typeof dpBindSchema>;

export const dpAclSchema = z
  .object({
    acl_name: word,
    criterion: word,
    value: z.string().optional(),
    index: z.number().int().optional(),
  })
  .loose();
export type DpAcl = z.infer<typeof dpAclSchema>;

export const dpRuleSchema = z
  .object({
    name: word,
    cond: z.enum(['if', 'unless']).optional(),
    cond_test: z.string().optional(),
    index: z.number().int().optional(),
  })
  .loose();
export type DpRule = z.infer<typeof dpRuleSchema>;

/** An http-request or http-response rule: the types npl-lb writes and their fields. */
export const dpHttpRuleSchema = z
  .object({
    type: z.string(),
    cond: z.enum(['if', 'unless']).optional(),
    cond_test: z.string().optional(),
    hdr_name: z.string().optional(),
    hdr_format: z.string().optional(),
    var_scope: word.optional(),
    var_name: word.optional(),
    var_expr: z.string().optional(),
    redir_type: z.enum(['location', 'prefix', 'scheme']).optional(),
    redir_value: word.optional(),
    redir_code: z
      .union([z.literal(301), z.literal(302), z.literal(303), z.literal(307), z.literal(308)])
      .optional(),
    path_fmt: word.optional(),
    return_status_code: z.number().int().min(200).max(599).optional(),
    /** return with headers: a content type, an (empty) log-format body, and the headers. */
    return_content_type: z.string().optional(),
    return_content_format: z.enum(['string', 'lf-string']).optional(),
    return_content: z.string().optional(),
    return_hdrs: z.array(z.object({ name: z.string(), fmt: z.string() })).optional(),
    /** set-timeout: which timeout (`server`) and its value (a duration or an expression). */
    timeout_type: z.enum(['server', 'tunnel', 'client']).optional(),
    timeout: z.string().optional(),
    /** wait-for-body: how long, in ms. */
    wait_time: z.number().int().min(0).optional(),
    /** lua: the action of a loaded script, and its arguments. */
    lua_action: word.optional(),
    lua_params: z.string().optional(),
    index: z.number().int().optional(),
  })
  .loose();
export type DpHttpRule = z.infer<typeof dpHttpRuleSchema>;

export const dpTcpRuleSchema = z
  .object({
    type: z.enum(['connection', 'content', 'inspect-delay', 'session']),
    action: z.string().optional(),
    cond: z.enum(['if', 'unless']).optional(),
    cond_test: z.string().optional(),
    timeout: z.number().int().optional(),
    index: z.number().int().optional(),
  })
  .loose();
export type DpTcpRule = z.infer<typeof dpTcpRuleSchema>;

/**
 * The global section, as far as npl-lb reads it: the Lua scripts it loads (v2 `lua_loads`, v3
 * `lua_options.loads`); its other fields are kept as they are (`loose`) and written back.
 */
const luaLoads = z.array(z.object({ file: z.string() }).loose());
export const dpGlobalSchema = z
  .object({
    lua_loads: luaLoads.optional(),
    lua_options: z.object({ loads: luaLoads.optional() }).loose().optional(),
  })
  .loose();
export type DpGlobal = z.infer<typeof dpGlobalSchema>;

/** A file in the storage (certificates, crt-lists, general files): where it is on the device. */
export const dpStoredFileSchema = z
  .object({
    storage_name: z.string().optional(),
    file: z.string().optional(),
    description: z.string().optional(),
  })
  .loose();
export type DpStoredFile = z.infer<typeof dpStoredFileSchema>;

export const dpTransactionSchema = z
  .object({
    id: word,
    _version: z.number().int().optional(),
    status: z.enum(['failed', 'outdated', 'in_progress', 'success']).optional(),
  })
  .loose();
export type DpTransaction = z.infer<typeof dpTransactionSchema>;

export const dpReloadSchema = z
  .object({
    id: z.string(),
    status: z.enum(['failed', 'in_progress', 'succeeded']),
    response: z.string().optional(),
    reload_timestamp: z.number().int().optional(),
  })
  .loose();
export type DpReload = z.infer<typeof dpReloadSchema>;

/** A server's runtime state (`runtime_server`): what the device's checks say, read-only to us. */
export const dpRuntimeServerSchema = z
  .object({
    name: z.string().optional(),
    address: z.string().optional(),
    port: z.number().int().nullable().optional(),
    admin_state: z.enum(['ready', 'maint', 'drain']).optional(),
    operational_state: z.enum(['up', 'down', 'stopping']).optional(),
    check_state: z.number().int().nullable().optional(),
    check_status: z.number().int().nullable().optional(),
    iweight: z.number().int().nullable().optional(),
  })
  .loose();
export type DpRuntimeServer = z.infer<typeof dpRuntimeServerSchema>;

export const dpErrorSchema = z.object({ code: z.number().int(), message: z.string() }).loose();

/** v2 wraps configuration reads as `{_version, data}`. */
export const wrapped = <T extends z.ZodType>(data: T) =>
  z.object({ _version: z.number().int(), data }).loose();

export type ApiVersion = 'v2' | 'v3';
