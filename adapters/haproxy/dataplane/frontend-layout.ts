/**
 * The model <-> Data Plane API mapping of virtual services, pure. A virtual service is a frontend
 * with one bind on its VIP and port (`ssl` with a crt-list for HTTPS); Ingress-style routes are
 * host and path ACLs switching to backends, Gateway API routes and TLS passthrough are the rules
 * of route-layout.ts. What HAProxy has no field for (the source, the routes themselves) is in the
 * frontend's `description`, as `k=v` words.
 */
import { keepServedMirrors } from '../mirrors.ts';
import { mirrorLayouts, type MirrorSection } from './mirror-layout.ts';
import { frontendOf } from '../parameters.ts';
import type {
  ClientValidation,
  HostClientValidation,
  HttpRoute,
  L4VirtualService,
  L7VirtualService,
  PathType,
  SniRoute,
  VirtualService,
} from '../../../src/model/types.ts';
import { enc, routeMatchers } from '../config.ts';
import { gatewayRules, needsRouteRules, sniRules } from '../http-routes.ts';
import type { LayoutOptions } from './layout.ts';
import { dec, words } from './layout.ts';
import type { DpAcl, DpBind, DpFrontend, DpHttpRule, DpRule, DpTcpRule } from './models.ts';
import { gatewayObjects, sniTcpRules, switchToDp } from './route-layout.ts';
import { L4_SRC_ACL, readFrontend, srcAclValues } from '../policy-lines.ts';
import { FILE_PREFIX } from '../policy-read.ts';
import { hostList } from '../config-parse.ts';
import { isMixed, outerBackend } from '../tls-mixed.ts';
import { type DeviceLoop, type LoopLayout, loopLayout, loopTerminates } from './tls-loop.ts';

/**
 * A class's frontend settings (LoadBalancerParameters `haproxy.frontend`) as the frontend's own
 * fields (the client timeout in ms), and the description word they are read back from.
 */
function settingsOf(v: VirtualService): { fields: Partial<DpFrontend>; words: string[] } {
  const f = frontendOf(v.placement);
  if (!f) return { fields: {}, words: [] };
  return {
    fields: {
      ...(f.maxConnections ? { maxconn: f.maxConnections } : {}),
      ...(f.clientTimeoutSeconds ? { client_timeout: f.clientTimeoutSeconds * 1000 } : {}),
    },
    words: [`frontend=${json(f)}`],
  };
}

export interface DeviceFrontend {
  frontend: DpFrontend;
  binds: DpBind[];
  /** A TLS-terminating frontend's certificates (HTTPS, TLS in Terminate mode), in its crt-list's order. */
  certificates?: string[];
  /** Hosts its crt-list asks client certificates for, each CA as the file named (`file:<path>`). */
  hostClientValidation?: HostClientValidation[];
  /** Mixed mode: the loop's backend and frontend (tls-loop.ts). */
  loop?: DeviceLoop;
  /** Its mirrors' frontends (mirror-layout.ts), and the pools they serve as written. */
  mirrors?: MirrorSection[];
  servedMirrors?: ReadonlySet<string>;
}

export interface FrontendLayout extends Omit<DeviceFrontend, 'loop'> {
  loop?: LoopLayout;
  acls: DpAcl[];
  rules: DpRule[];
  httpRequest: DpHttpRule[];
  httpResponse: DpHttpRule[];
  tcpRequest: DpTcpRule[];
}

function bindFor(vip: string, port: number, o: LayoutOptions, tls?: BindTls): DpBind {
  return {
    name: 'vip',
    address: vip,
    port,
    ...(o.transparentBinds ? { transparent: true } : {}),
    ...(tls ? { ssl: true, crt_list: tls.crtList } : {}),
    // HTTP/2 offered by ALPN on HTTPS (on HTTP it comes with prior knowledge, told by its preface).
    ...(tls?.h2 ? { alpn: 'h2,http/1.1' } : {}),
    ...(tls?.client ? clientFields(tls.client, o) : {}),
  };
}

interface BindTls {
  crtList: string;
  h2: boolean | undefined;
  client: ClientValidation | undefined;
}

/**
 * Client certificates asked (a Gateway's spec.tls.frontend): the CA's stored file, `verify
 * required`; with the insecure fallback, `verify optional` and the leaf's and chain's errors
 * ignored (config.ts clientWords, as fields).
 */
function clientFields(c: ClientValidation, o: LayoutOptions): Partial<DpBind> {
  return {
    ssl_cafile: o.caPath?.(c.ca) ?? '',
    ...(c.insecureFallback
      ? { verify: 'optional' as const, ca_ignore_err: 'all', crt_ignore_err: 'all' }
      : { verify: 'required' as const }),
  };
}

/**
 * A bind's client validation read back from its own fields: exactly what clientFields writes, else
 * none (so `verify none` or a missing field is written again); the CA as `file:<path>`, resolved
 * by the adapter to the stored file's content.
 */
function readClient(b: DpBind | undefined): ClientValidation | undefined {
  if (!b?.ssl || !b.ssl_cafile) return undefined;
  const ignores = b.ca_ignore_err === 'all' && b.crt_ignore_err === 'all';
  const none = b.ca_ignore_err === undefined && b.crt_ignore_err === undefined;
  if (b.verify === 'required' && none)
    return { ca: `${FILE_PREFIX}${b.ssl_cafile}`, insecureFallback: false };
  if (b.verify === 'optional' && ignores)
    return { ca: `${FILE_PREFIX}${b.ssl_cafile}`, insecureFallback: true };
  return undefined;
}

const noRules = { acls: [], rules: [], httpRequest: [], httpResponse: [], tcpRequest: [] };
const json = (x: unknown): string => enc(JSON.stringify(x));
const unjson = <T>(w: string | undefined): T | undefined =>
  w === undefined ? undefined : (JSON.parse(decodeURIComponent(w)) as T);

const routeWord = (r: HttpRoute) => [r.host, r.path, r.pathType, r.source, r.pool].map(enc).join(':');

/**
 * An L4 virtual service as a frontend: a pool, or SNI routes (passthrough, or terminated with the
 * crt-list; in Mixed mode both, the terminated names round the loop of tls-loop.ts).
 */
function l4Frontend(v: L4VirtualService, o: LayoutOptions, crtList: string | undefined): FrontendLayout {
  // Terminate mode: `ssl` with the crt-list on the bind, SNI routes on the session's name. Mixed:
  // this bind passes TLS through, routing by the ClientHello, and the loop terminates.
  const terminate = v.certificates !== undefined;
  const mixed = isMixed(v);
  const sni = v.sni
    ? mixed
      ? sniRules(v.sni, false, outerBackend(v))
      : sniRules(v.sni, terminate)
    : undefined;
  const words = [
    'npl-lb l4',
    `owner=${enc(o.owner)}`,
    `source=${enc(v.source)}`,
    `protocol=${v.protocol}`,
    ...(v.sni ? [`sni=${json(v.sni)}`] : []),
    ...(terminate ? ['tls=terminate'] : []),
    ...(v.sourceRanges ? [`sourceRanges=${json(v.sourceRanges)}`] : []),
    ...settingsOf(v).words,
  ];
  const backend = sni ? sni.defaultBackend : v.pool;
  // The client filter first: a connection from outside the ranges is refused (none: all are).
  // The ranges go on as many lines of one ACL as they need (policy-lines.ts).
  const filter: DpTcpRule[] = v.sourceRanges
    ? [
        v.sourceRanges.length === 0
          ? { type: 'connection', action: 'reject' }
          : { type: 'connection', action: 'reject', cond: 'unless', cond_test: L4_SRC_ACL },
      ]
    : [];
  const filterAcls: DpAcl[] = srcAclValues(v.sourceRanges ?? []).map((value) => ({
    acl_name: L4_SRC_ACL,
    criterion: 'src',
    value,
  }));
  return {
    frontend: {
      name: v.name,
      mode: 'tcp',
      ...(backend ? { default_backend: backend } : {}),
      ...settingsOf(v).fields,
      description: words.join(' '),
    },
    binds: [
      bindFor(
        v.vip,
        v.port,
        o,
        terminate && !mixed ? { crtList: crtList ?? '', h2: false, client: undefined } : undefined,
      ),
    ],
    ...(terminate ? { certificates: v.certificates ?? [] } : {}),
    ...noRules,
    acls: filterAcls,
    ...(sni ? { rules: sni.switching.map(switchToDp) } : {}),
    tcpRequest: [...filter, ...(sni && (!terminate || mixed) ? sniTcpRules(sni) : [])],
    ...(mixed
      ? {
          loop: loopLayout(
            v,
            { owner: o.owner, instance: o.instance ?? '' },
            crtList ?? '',
            settingsOf(v).fields,
          ),
        }
      : {}),
  };
}

/**
 * A virtual service as a frontend. `crtList`: where the HTTPS frontend's crt-list is on the device
 * (the storage endpoints say). Gateway API routes and SNI routes are kept whole in the description
 * (URI-encoded JSON), so observe() gives back exactly what was applied.
 */
export function frontendFor(v: VirtualService, o: LayoutOptions, crtList?: string): FrontendLayout {
  if (v.kind === 'l4') return l4Frontend(v, o, crtList);
  const gateway = needsRouteRules(v);
  const https = v.protocol === 'HTTPS';
  const words = [
    'npl-lb',
    'l7',
    `owner=${enc(o.owner)}`,
    `ingressClass=${enc(v.ingressClass)}`,
    ...(https ? ['protocol=HTTPS'] : []),
    ...(v.http2 ? ['http2=true'] : []),
    ...(v.listenerHosts ? [`listenerHosts=${json(v.listenerHosts)}`] : []),
    ...(v.clientValidation?.subjectHeader
      ? [`clientSubjectHeader=${enc(v.clientValidation.subjectHeader)}`]
      : []),
    ...settingsOf(v).words,
  ];
  const frontend = (extra: string[]): DpFrontend => ({
    name: v.name,
    mode: 'http',
    ...(v.defaultPool ? { default_backend: v.defaultPool } : {}),
    ...settingsOf(v).fields,
    description: [...words, ...extra].join(' '),
  });
  const binds = [
    bindFor(
      v.vip,
      v.port,
      o,
      https ? { crtList: crtList ?? '', h2: v.http2, client: v.clientValidation } : undefined,
    ),
  ];
  const certificates = https ? { certificates: v.certificates ?? [] } : {};
  if (gateway) {
    const instance = o.instance ?? '';
    const g = gatewayObjects(gatewayRules(v, instance));
    const mirrors = mirrorLayouts(v, { owner: o.owner, instance });
    return {
      frontend: frontend([`groutes=${json(v.routes)}`]),
      binds,
      ...certificates,
      ...noRules,
      ...g,
      ...(mirrors.length > 0 ? { mirrors } : {}),
    };
  }
  const matchers = routeMatchers(v.routes);
  return {
    frontend: frontend(
      v.routes.length > 0 ? [`routes=${matchers.map((m) => routeWord(m.route)).join(',')}`] : [],
    ),
    binds,
    ...certificates,
    ...noRules,
    acls: matchers.flatMap((m) =>
      m.acls.map((a) => ({ acl_name: a.name, criterion: a.criterion, value: a.value })),
    ),
    rules: matchers.map((m) => ({ name: m.route.pool, cond: 'if' as const, cond_test: m.cond })),
  };
}

/** A frontend read back as a virtual service (VIP and port from its first bind). */
export function readVirtualService(d: DeviceFrontend): VirtualService {
  const meta = words(d.frontend.description);
  const bind = d.binds[0];
  const vip = bind?.address ?? '';
  const port = bind?.port ?? 0;
  if (/^npl-lb l4\b/.test(d.frontend.description ?? '')) {
    const vs: L4VirtualService = {
      kind: 'l4',
      name: d.frontend.name,
      vip,
      port,
      protocol: meta.protocol === 'UDP' ? 'UDP' : 'TCP',
      pool: d.frontend.default_backend ?? '',
      source: dec(meta.source) ?? '',
      ...(meta.sourceRanges !== undefined ? { sourceRanges: unjson<string[]>(meta.sourceRanges) ?? [] } : {}),
      ...readFrontend(dec(meta.frontend)),
    };
    const sni = unjson<SniRoute[]>(meta.sni);
    if (sni) {
      vs.pool = '';
      vs.sni = sni;
    }
    // Terminate mode, from the bind's own `ssl` and crt-list (without them TLS passes through); in
    // Mixed mode from the loop's, the port's own bind passing TLS through.
    const mixed = sni?.some((r) => r.passthrough) === true;
    const terminating = mixed ? !bind?.ssl && loopTerminates(d.loop) : !!bind?.ssl && !!bind.crt_list;
    if (meta.tls === 'terminate' && terminating) vs.certificates = d.certificates ?? [];
    return vs;
  }
  const routes: HttpRoute[] =
    unjson<HttpRoute[]>(meta.groutes) ??
    (meta.routes ?? '')
      .split(',')
      .filter(Boolean)
      .map((w) => {
        const [host, path, pathType, source, pool] = w.split(':').map((x) => decodeURIComponent(x));
        return {
          host: host ?? '',
          path: path ?? '/',
          pathType: (pathType ?? 'Prefix') as PathType,
          source: source ?? '',
          pool: pool ?? '',
        };
      });
  const vs: L7VirtualService = {
    kind: 'l7',
    name: d.frontend.name,
    vip,
    port,
    ingressClass: dec(meta.ingressClass) ?? '',
    routes,
    defaultPool: d.frontend.default_backend,
    ...readFrontend(dec(meta.frontend)),
  };
  if (meta.http2 === 'true') vs.http2 = true;
  if (meta.protocol === 'HTTPS') {
    vs.protocol = 'HTTPS';
    vs.certificates = d.certificates ?? [];
    const hosts = hostList(dec(meta.listenerHosts));
    if (hosts) vs.listenerHosts = hosts;
    const client = readClient(bind);
    const header = dec(meta.clientSubjectHeader);
    if (client) vs.clientValidation = { ...client, ...(header ? { subjectHeader: header } : {}) };
    if (d.hostClientValidation) vs.hostClientValidation = d.hostClientValidation;
  }
  keepServedMirrors(vs, d.servedMirrors ?? new Set());
  return vs;
}
