/**
 * `npl-lb sandbox`: an in-memory Kubernetes API server on one port, over HTTP or HTTPS with a
 * bearer token, faithful enough for kubectl and @kubernetes/client-node.
 */
import type { PortRange } from './allocator.ts';
import {
  createServer as createHttpServer,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from 'node:http';
import { type AuditEntry, verbOf } from './audit.ts';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { ErrorCodes, NplError } from '../runtime/errors.ts';
import type { Logger } from '../runtime/logger.ts';
import { silentLogger } from '../runtime/logger.ts';
import { decodeDeleteBody, decodeObjectBody, decodePatchBody, readBody } from './http-body.ts';
import { writeHeaders, writeOptions } from './write-options.ts';
import { EndpointSliceController } from './endpointslice-controller.ts';
import { WorkloadController } from './workload-controller.ts';
import { AdmissionWebhooks } from './admission-webhooks.ts';
import { hasScale, serveScale } from './scale.ts';
import { isPodSubresource, servePodSubresource } from './pod-subresources.ts';
import { send, sendError } from './http-util.ts';
import { serveStatic } from './static-routes.ts';
import { apiVersionOf, RESOURCE_TYPES, type ResourceType, storageKey, supportedFields } from './kinds.ts';
import { OpenApi } from './openapi.ts';
import { negotiatedReply, prefersProtobuf } from './protobuf-encode.ts';
import { Registry } from './registry.ts';
import { parseFieldSelector, parseLabelSelector } from './selectors.ts';
import { ApiError, badRequest, methodNotAllowed, notFoundPath, unauthorized } from './status.ts';
import { Store, type StoredObject } from './store.ts';
import { type TableRequest, tableRequested, toTable } from './table.ts';
import { serveWatch, watchStart } from './watch-stream.ts';
import { parseResourcePath, type Route } from './resource-path.ts';
import { continueAfter, parseContinue } from './continue-token.ts';

export type { AuditEntry } from './audit.ts';

export interface SandboxOptions {
  host?: string;
  port?: number;
  tls?: { cert: string; key: string };
  /** Bearer token every request must carry (except health and version). */
  token?: string;
  /** More bearer tokens, each standing for a user (as an API server's static token file). */
  users?: Record<string, string>;
  /** Called for every resource request with its user and RBAC attributes (an audit log). */
  audit?: (entry: AuditEntry) => void;
  historySize?: number;
  bookmarkIntervalMs?: number;
  /** Node ports for Services (kube-apiserver's --service-node-port-range); default 30000-32767. */
  nodePortRange?: PortRange;
  logger?: Logger;
  openapi?: OpenApi;
  /** Keep Services' EndpointSlices as kube-controller-manager does (endpointslice-controller.ts). */
  endpointSlices?: boolean;
  /**
   * Run Deployments, ReplicaSets and DaemonSets as kube-controller-manager, the scheduler and a
   * kubelet would, nothing actually running (workload-controller.ts).
   */
  workloads?: boolean;
}

export interface Sandbox {
  readonly url: string;
  readonly store: Store;
  readonly registry: Registry;
  close(): Promise<void>;
}

const PUBLIC_PATHS = new Set(['/healthz', '/readyz', '/livez', '/version']);
const DEFAULT_WATCH_TIMEOUT_S = 1800;

export class SandboxServer implements Sandbox {
  readonly store: Store;
  readonly registry: Registry;
  private server: Server | undefined;
  private readonly log: Logger;
  private readonly closers = new Set<() => void>();
  private address = '';
  /** The port of the first listen, kept so a restart comes back on the same address. */
  private boundPort: number | undefined;

  private slices: EndpointSliceController | undefined;
  private workloads: WorkloadController | undefined;
  /** Admission webhooks (admission-webhooks.ts), called for creates through the API and the workload controllers. */
  readonly admission: AdmissionWebhooks;

  constructor(private readonly opts: SandboxOptions = {}) {
    this.store = new Store(opts.historySize ?? 20_000);
    this.log = opts.logger ?? silentLogger();
    this.registry = new Registry(this.store, opts.openapi ?? new OpenApi(), opts.nodePortRange, this.log);
    if (opts.endpointSlices) {
      this.slices = new EndpointSliceController(this.registry, this.store);
      this.slices.start();
    }
    this.admission = new AdmissionWebhooks(this.store);
    if (opts.workloads) {
      this.workloads = new WorkloadController(this.registry, this.store, undefined, this.admission);
      this.workloads.start();
    }
    for (const name of ['default', 'kube-system', 'kube-public', 'kube-node-lease']) {
      const ns = RESOURCE_TYPES.find((t) => t.kind === 'Namespace')!;
      this.registry.create(
        ns,
        '',
        { metadata: { name } },
        { dryRun: false, fieldValidation: 'Strict', warnings: [] },
      );
    }
  }

  get url(): string {
    return `${this.opts.tls ? 'https' : 'http'}://${this.address}`;
  }

  async listen(): Promise<this> {
    const handler = (req: IncomingMessage, res: ServerResponse): void => {
      this.handle(req, res).catch((err: unknown) => {
        if (err instanceof ApiError) sendError(res, err);
        else {
          this.log.error({ err, url: req.url }, 'sandbox request failed');
          sendError(res, new ApiError(500, 'InternalError', `Internal error occurred: ${String(err)}`));
        }
      });
    };
    this.server = this.opts.tls
      ? createHttpsServer({ cert: this.opts.tls.cert, key: this.opts.tls.key }, handler)
      : createHttpServer(handler);
    this.server.keepAliveTimeout = 65_000;
    const host = this.opts.host ?? '127.0.0.1';
    const port = this.boundPort ?? this.opts.port ?? 0;
    await new Promise<void>((resolve, reject) => {
      this.server!.once('error', (err) =>
        reject(
          new NplError(ErrorCodes.SANDBOX_LISTEN_FAILED, `cannot listen on ${host}:${port}: ${err.message}`, {
            cause: err,
          }),
        ),
      );
      this.server!.listen(port, host, () => resolve());
    });
    const addr = this.server.address() as AddressInfo;
    this.boundPort = addr.port;
    this.address = addr.family === 'IPv6' ? `[${addr.address}]:${addr.port}` : `${addr.address}:${addr.port}`;
    return this;
  }

  /** Stops serving (watches end, connections drop) and serves again on the same port with the same data,
   * as an API server restart over a surviving etcd does. */
  async restart(downtimeMs = 0): Promise<void> {
    await this.close();
    if (downtimeMs > 0) await new Promise((r) => setTimeout(r, downtimeMs));
    await this.listen();
  }

  async close(): Promise<void> {
    this.slices?.stop();
    this.workloads?.stop();
    for (const c of this.closers) c();
    this.closers.clear();
    const s = this.server;
    if (!s) return;
    this.server = undefined;
    await new Promise<void>((resolve) => {
      s.close(() => resolve());
      s.closeAllConnections();
    });
  }

  /** The user a request authenticates as ('' when no tokens are configured), or undefined. */
  private authenticate(req: IncomingMessage, path: string): string | undefined {
    const auth = req.headers.authorization ?? '';
    const bearer = auth.startsWith('Bearer ') ? auth.slice(7) : undefined;
    const user = bearer !== undefined ? this.opts.users?.[bearer] : undefined;
    if (user !== undefined) return user;
    if (this.opts.token !== undefined && bearer === this.opts.token) return 'admin';
    if ((!this.opts.token && !this.opts.users) || PUBLIC_PATHS.has(path)) return '';
    return undefined;
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://sandbox');
    const path = url.pathname.replace(/\/+$/, '') || '/';
    const user = this.authenticate(req, path);
    if (user === undefined) throw unauthorized();
    const method = req.method ?? 'GET';
    this.log.debug({ method, url: req.url }, 'request');
    if (
      method === 'GET' &&
      serveStatic(path, req, res, this.registry.openapi, this.address, this.registry.types)
    )
      return;
    const route = parseResourcePath(
      this.registry.types,
      path.split('/').filter(Boolean).map(decodeURIComponent),
    );
    if (!route) throw notFoundPath();
    this.opts.audit?.({
      user,
      verb: verbOf(method, route.name !== undefined, url.searchParams),
      apiGroup: route.type.group,
      resource: route.subresource ? `${route.type.plural}/${route.subresource}` : route.type.plural,
      namespace: route.namespace ?? '',
      name: route.name ?? '',
    });
    await this.serveResource(route, method, url.searchParams, req, res, user);
  }

  private render(t: ResourceType, table: TableRequest | undefined): (s: StoredObject) => string {
    if (!table) return (s) => this.registry.viewJson(t, s);
    return (s) =>
      JSON.stringify(toTable(t, [this.registry.view(t, s.obj)], table, String(this.store.currentRV())));
  }

  /** A collection: its list, a create (through the admission webhooks), or a delete of what the selectors take. */
  private async serveCollection(
    route: Route,
    method: string,
    q: URLSearchParams,
    req: IncomingMessage,
    res: ServerResponse,
    user: string,
    table: TableRequest | undefined,
    reply: ReturnType<typeof negotiatedReply>,
  ): Promise<void> {
    const t = route.type;
    const ns = route.namespace ?? '';
    if (method === 'GET') return this.serveList(route, q, res, table, reply);
    if (method === 'POST') {
      let body = await decodeObjectBody(req, await readBody(req), this.registry.openapi);
      if (t.namespaced && route.namespace === undefined) throw methodNotAllowed();
      const opts = writeOptions(q, req);
      // Admission webhooks, as kube-apiserver calls them before it stores a create.
      if (typeof body === 'object' && body !== null && !Array.isArray(body))
        body = await this.admission.admit({
          type: t,
          namespace: ns,
          operation: 'CREATE',
          object: body,
          dryRun: opts.dryRun,
          user,
        });
      const created = this.registry.create(t, ns, body, opts);
      return reply(201, this.registry.viewJson(t, created), writeHeaders(opts));
    }
    if (method === 'DELETE') {
      await readBody(req);
      const labels = parseLabelSelector(q.get('labelSelector'));
      const fields = parseFieldSelector(q.get('fieldSelector'), supportedFields(t));
      const deleted = this.registry.list(t, route.namespace, labels, fields).map((s) =>
        this.registry.delete(t, ns, String((s.obj.metadata as { name: string }).name), {
          dryRun: q.has('dryRun'),
        }),
      );
      return reply(200, this.listJson(t, deleted, undefined));
    }
    throw methodNotAllowed();
  }

  private async serveResource(
    route: Route,
    method: string,
    q: URLSearchParams,
    req: IncomingMessage,
    res: ServerResponse,
    user = '',
  ): Promise<void> {
    const { type: t, name, subresource } = route;
    if (subresource === 'scale' && name !== undefined && hasScale(t))
      return serveScale(this.registry, t, route.namespace ?? '', name, method, q, req, res);
    if (name !== undefined && isPodSubresource(t, subresource))
      return servePodSubresource(
        { registry: this.registry, logs: (uid, c) => this.workloads?.logs(uid, c) },
        t,
        route.namespace ?? '',
        name,
        subresource!,
        method,
        q,
        res,
      );
    if (subresource !== undefined && (subresource !== 'status' || !t.hasStatus)) throw notFoundPath();
    const status = subresource === 'status' ? 'status' : undefined;
    const ns = route.namespace ?? '';
    const table = tableRequested(req.headers.accept);
    // Objects and lists in protobuf when the client prefers it (client-go does), else JSON.
    const reply = negotiatedReply(res, !table && prefersProtobuf(req.headers.accept), this.registry.openapi);
    if (name === undefined) return this.serveCollection(route, method, q, req, res, user, table, reply);
    if (method === 'GET') {
      if (q.get('watch') === 'true' || q.get('watch') === '1')
        throw badRequest('watch of a single object is done with a fieldSelector on metadata.name');
      const s = this.registry.get(t, ns, name);
      return reply(200, this.render(t, table)(s));
    }
    if (method === 'PUT') {
      const body = await decodeObjectBody(req, await readBody(req), this.registry.openapi);
      const opts = writeOptions(q, req);
      const out = this.registry.update(t, ns, name, body, status, opts);
      return reply(200, this.registry.viewJson(t, out), writeHeaders(opts));
    }
    if (method === 'PATCH') {
      const { type, patch } = await decodePatchBody(req, await readBody(req));
      const opts = writeOptions(q, req);
      const out =
        type === 'apply' && !status
          ? // An apply names its manager: the User-Agent does not stand in for it.
            this.registry.fields.apply(
              this.registry,
              t,
              ns,
              name,
              patch,
              { ...opts, fieldManager: q.get('fieldManager') ?? undefined },
              q.get('force') === 'true',
            )
          : this.registry.patch(t, ns, name, type, patch, status, opts);
      return reply(200, this.registry.viewJson(t, out), writeHeaders(opts));
    }
    if (method === 'DELETE' && !status) {
      const raw = (await decodeDeleteBody(req, await readBody(req), this.registry.openapi)) as
        | {
            preconditions?: { uid?: string; resourceVersion?: string };
            dryRun?: string[];
            gracePeriodSeconds?: number;
          }
        | undefined;
      const grace = q.get('gracePeriodSeconds') ?? raw?.gracePeriodSeconds;
      const out = this.registry.delete(t, ns, name, {
        dryRun: q.has('dryRun') || (raw?.dryRun?.length ?? 0) > 0,
        ...(raw?.preconditions ? { preconditions: raw.preconditions } : {}),
        ...(grace !== undefined && Number.isFinite(Number(grace))
          ? { gracePeriodSeconds: Number(grace) }
          : {}),
      });
      const gone = this.store.get(storageKey(t), t.namespaced ? ns : '', name) === undefined;
      return reply(gone ? 200 : 202, this.registry.viewJson(t, out));
    }
    throw methodNotAllowed();
  }

  private listJson(t: ResourceType, items: StoredObject[], cont: string | undefined, rv?: string): string {
    const meta = JSON.stringify({
      resourceVersion: rv ?? String(this.store.currentRV()),
      ...(cont ? { continue: cont } : {}),
    });
    const parts = items.map((s) => this.registry.viewJson(t, s));
    return `{"kind":"${t.kind}List","apiVersion":"${apiVersionOf(t)}","metadata":${meta},"items":[${parts.join(',')}]}`;
  }

  private serveList(
    route: Route,
    q: URLSearchParams,
    res: ServerResponse,
    table: TableRequest | undefined,
    reply: (code: number, text: string) => void,
  ): void {
    const t = route.type;
    const labels = parseLabelSelector(q.get('labelSelector'));
    const fields = parseFieldSelector(q.get('fieldSelector'), supportedFields(t));
    if (q.get('watch') === 'true' || q.get('watch') === '1') {
      const timeout = Number(q.get('timeoutSeconds') ?? DEFAULT_WATCH_TIMEOUT_S);
      const close = serveWatch(this.registry, res, {
        type: t,
        namespace: route.namespace,
        labels,
        fields,
        ...watchStart(q),
        timeoutSeconds: Number.isFinite(timeout) && timeout > 0 ? timeout : DEFAULT_WATCH_TIMEOUT_S,
        bookmarkIntervalMs: this.opts.bookmarkIntervalMs ?? 10_000,
        render: this.render(t, table),
      });
      this.closers.add(close);
      res.on('close', () => this.closers.delete(close));
      return;
    }
    const token = parseContinue(q.get('continue'));
    const rv = token ? String(token.rv) : String(this.store.currentRV());
    const limit = Number(q.get('limit') ?? 0);
    const { items, more } = this.registry.page(t, route.namespace, labels, fields, token?.start, limit);
    const cont = more
      ? continueAfter(
          Number(rv),
          items[items.length - 1]!.obj.metadata as { namespace?: string; name: string },
        )
      : undefined;
    if (table) {
      const rows = items.map((s) => this.registry.view(t, s.obj));
      send(res, 200, toTable(t, rows, table, rv, cont));
      return;
    }
    reply(200, this.listJson(t, items, cont, rv));
  }
}

export async function startSandbox(opts: SandboxOptions = {}): Promise<SandboxServer> {
  return new SandboxServer(opts).listen();
}
