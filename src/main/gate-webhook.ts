/**
 * The mutating admission webhook that injects the readiness gate (gate-injection.ts), served by
 * every controller replica over HTTPS on `--webhook-address`:
 * - its serving certificate is made by the controller (self-signed CA, valid for the webhook
 *   Service's DNS names), kept in a Secret so every replica serves the same one, and rotated
 *   (made anew) when it has less than a third of its life left; replicas pick up a rotation from
 *   the Secret within `checkMs`;
 * - the certificate is written into the MutatingWebhookConfiguration's `caBundle` (every webhook
 *   of it), so the API server trusts it;
 * - a review reads the namespace's Services from the API (cached a few seconds), so a standby
 *   replica answers as the leader does; anything that goes wrong answers "allowed" without a patch
 *   (the configuration's failurePolicy is Ignore too): the webhook never blocks a Pod.
 */
import { X509Certificate } from 'node:crypto';
import { createServer, type Server } from 'node:https';
import type { KubeConfig } from '@kubernetes/client-node';
import { z } from 'zod';
import type { ControllerConfig } from '../config/controller-config.ts';
import { admissionResponse, admissionReviewSchema, gatePatch } from '../controller/gate-injection.ts';
import { type Service, serviceSchema } from '../kube/objects.ts';
import { collectionPath, RESOURCES } from '../kube/paths.ts';
import { getJson, KubeApiError, postJson, putJson } from '../kube/raw-client.ts';
import type { Logger } from '../runtime/logger.ts';
import { ourLoadBalancer } from '../source/ours.ts';

export interface GateWebhookOptions {
  kubeConfig: KubeConfig;
  config: ControllerConfig;
  log: Logger;
  host: string;
  port: number;
  /** Where the certificate is kept, and the Service and configuration it is for. */
  namespace: string;
  secretName: string;
  serviceName: string;
  configurationName: string;
  /** How often the Secret is checked for a rotation (default 1 h). */
  checkMs?: number;
  /** Life of a certificate made (default 365 days). */
  lifetimeMs?: number;
}

interface Pair {
  cert: string;
  key: string;
}

const secretSchema = z.object({
  metadata: z.object({ resourceVersion: z.string().optional() }).loose(),
  data: z.record(z.string(), z.string()).default({}),
});
const b64 = (s: string) => Buffer.from(s).toString('base64');
const unb64 = (s: string | undefined) => (s ? Buffer.from(s, 'base64').toString('utf8') : '');

/** Whether a certificate has less than a third of its life left (or cannot be read). */
export function needsRotation(certPem: string, now = Date.now()): boolean {
  try {
    const x = new X509Certificate(certPem);
    const from = Date.parse(x.validFrom);
    const to = Date.parse(x.validTo);
    return to - now < (to - from) / 3;
  } catch {
    return true;
  }
}

async function makePair(dnsNames: string[], lifetimeMs: number): Promise<Pair> {
  // Loaded here, not with the module: only a controller serving the webhook makes a certificate.
  const { generate } = await import('selfsigned');
  const pems = await generate([{ name: 'commonName', value: dnsNames[0]! }], {
    keyType: 'ec',
    curve: 'P-256',
    notBeforeDate: new Date(Date.now() - 60_000),
    notAfterDate: new Date(Date.now() + lifetimeMs),
    extensions: [
      { name: 'basicConstraints', cA: true },
      { name: 'keyUsage', digitalSignature: true, keyCertSign: true },
      { name: 'extKeyUsage', serverAuth: true },
      {
        name: 'subjectAltName',
        altNames: [
          ...dnsNames.map((value) => ({ type: 2 as const, value })),
          { type: 7 as const, ip: '127.0.0.1' },
        ],
      },
    ],
  });
  return { cert: pems.cert, key: pems.private };
}

export class GateWebhook {
  private server: Server | undefined;
  private served: Pair | undefined;
  private timer: NodeJS.Timeout | undefined;
  private readonly services = new Map<string, { at: number; list: Service[] }>();
  readonly stats = { reviews: 0, injected: 0, errors: 0, rotations: 0 };

  constructor(private readonly o: GateWebhookOptions) {}

  private get secretPath(): string {
    return `${collectionPath(RESOURCES.secrets, this.o.namespace)}/${encodeURIComponent(this.o.secretName)}`;
  }

  private dnsNames(): string[] {
    const s = `${this.o.serviceName}.${this.o.namespace}`;
    return [`${s}.svc`, `${s}.svc.cluster.local`, s, this.o.serviceName, 'localhost'];
  }

  /** The certificate in the Secret, made (or made anew) when missing or due; written to caBundle. */
  async ensureCertificate(): Promise<Pair> {
    const kc = this.o.kubeConfig;
    let current: z.infer<typeof secretSchema> | undefined;
    try {
      current = secretSchema.parse(await getJson(kc, this.secretPath, {}));
    } catch (err) {
      if (!(err instanceof KubeApiError && err.statusCode === 404)) throw err;
    }
    let pair: Pair = { cert: unb64(current?.data['tls.crt']), key: unb64(current?.data['tls.key']) };
    if (!pair.cert || !pair.key || needsRotation(pair.cert)) {
      pair = await makePair(this.dnsNames(), this.o.lifetimeMs ?? 365 * 24 * 3600 * 1000);
      const body = {
        apiVersion: 'v1',
        kind: 'Secret',
        type: 'kubernetes.io/tls',
        metadata: {
          name: this.o.secretName,
          namespace: this.o.namespace,
          ...(current?.metadata.resourceVersion ? { resourceVersion: current.metadata.resourceVersion } : {}),
        },
        data: { 'tls.crt': b64(pair.cert), 'tls.key': b64(pair.key) },
      };
      try {
        if (current) await putJson(kc, this.secretPath, body);
        else await postJson(kc, collectionPath(RESOURCES.secrets, this.o.namespace), body);
        this.stats.rotations++;
        this.o.log.info({ secret: this.o.secretName }, 'readiness gate webhook: serving certificate made');
      } catch (err) {
        // Another replica wrote it first: serve theirs.
        if (!(err instanceof KubeApiError && err.statusCode === 409)) throw err;
        return this.ensureCertificate();
      }
    }
    await this.writeCaBundle(pair.cert);
    return pair;
  }

  /** Every webhook of the configuration trusts the certificate (a PUT of what was read). */
  private async writeCaBundle(cert: string): Promise<void> {
    const path = `/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations/${encodeURIComponent(this.o.configurationName)}`;
    let cfg: Record<string, unknown>;
    try {
      cfg = z.record(z.string(), z.unknown()).parse(await getJson(this.o.kubeConfig, path, {}));
    } catch (err) {
      if (err instanceof KubeApiError && err.statusCode === 404) {
        this.o.log.warn(
          { configuration: this.o.configurationName },
          'readiness gate webhook: no MutatingWebhookConfiguration to trust it',
        );
        return;
      }
      throw err;
    }
    const bundle = b64(cert);
    const hooks = z.array(z.record(z.string(), z.unknown())).catch([]).parse(cfg.webhooks);
    const clientConfig = (h: Record<string, unknown>) =>
      z.record(z.string(), z.unknown()).catch({}).parse(h.clientConfig);
    if (hooks.every((h) => clientConfig(h).caBundle === bundle)) return;
    const webhooks = hooks.map((h) => ({ ...h, clientConfig: { ...clientConfig(h), caBundle: bundle } }));
    await putJson(this.o.kubeConfig, path, { ...cfg, webhooks });
  }

  private async servicesIn(namespace: string): Promise<Service[]> {
    const hit = this.services.get(namespace);
    if (hit && Date.now() - hit.at < 3000) return hit.list;
    const body = z
      .object({ items: z.array(z.unknown()).default([]) })
      .parse(await getJson(this.o.kubeConfig, collectionPath(RESOURCES.services, namespace), {}));
    const list = body.items.flatMap((i) => {
      const s = serviceSchema.safeParse(i);
      return s.success ? [s.data] : [];
    });
    this.services.set(namespace, { at: Date.now(), list });
    return list;
  }

  /** An AdmissionReview's answer (always allowed). */
  async review(body: unknown): Promise<unknown> {
    this.stats.reviews++;
    const parsed = admissionReviewSchema.safeParse(body);
    if (!parsed.success)
      throw new Error(`not an AdmissionReview v1: ${parsed.error.issues[0]?.message ?? ''}`);
    const review = parsed.data;
    try {
      const ops = gatePatch(review, await this.servicesIn(review.request.namespace), (s) =>
        ourLoadBalancer(s, this.o.config),
      );
      if (ops.length > 0) this.stats.injected++;
      return admissionResponse(review, ops);
    } catch (err) {
      this.stats.errors++;
      this.o.log.warn(
        { err: (err as Error).message },
        'readiness gate webhook: Pod admitted without the gate',
      );
      return admissionResponse(review, []);
    }
  }

  async start(): Promise<string> {
    this.served = await this.ensureCertificate();
    const server = createServer({ cert: this.served.cert, key: this.served.key }, (req, res) => {
      const chunks: Buffer[] = [];
      let size = 0;
      req.on('data', (c: Buffer) => {
        size += c.length;
        if (size <= 3 * 1024 * 1024) chunks.push(c);
      });
      req.on('end', () => {
        void (async () => {
          if (req.method !== 'POST' || !req.url?.startsWith('/mutate-pods') || size > 3 * 1024 * 1024) {
            res.writeHead(req.method !== 'POST' ? 405 : size > 3 * 1024 * 1024 ? 413 : 404).end();
            return;
          }
          try {
            const answer = await this.review(JSON.parse(Buffer.concat(chunks).toString('utf8')));
            res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(answer));
          } catch (err) {
            this.stats.errors++;
            res.writeHead(400, { 'content-type': 'text/plain' }).end((err as Error).message);
          }
        })();
      });
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.o.port, this.o.host, () => resolve());
    });
    this.server = server;
    this.timer = setInterval(() => void this.check(), this.o.checkMs ?? 3600_000);
    this.timer.unref();
    const a = server.address();
    const port = typeof a === 'object' && a ? a.port : this.o.port;
    return `https://${this.o.host.includes(':') ? `[${this.o.host}]` : this.o.host}:${port}`;
  }

  /** Rotates when due, or serves what another replica rotated to. */
  async check(): Promise<void> {
    try {
      const pair = await this.ensureCertificate();
      if (pair.cert !== this.served?.cert) {
        this.server?.setSecureContext({ cert: pair.cert, key: pair.key });
        this.served = pair;
        this.o.log.info('readiness gate webhook: serving the rotated certificate');
      }
    } catch (err) {
      this.o.log.warn(
        { err: (err as Error).message },
        'readiness gate webhook: certificate check failed; retried later',
      );
    }
  }

  /** The certificate served now (PEM). */
  get certificate(): string {
    return this.served?.cert ?? '';
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    const s = this.server;
    this.server = undefined;
    if (!s) return;
    s.closeAllConnections();
    await new Promise<void>((r) => s.close(() => r()));
  }
}
