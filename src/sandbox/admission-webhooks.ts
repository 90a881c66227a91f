/**
 * Admission webhooks as kube-apiserver calls them (admissionregistration.k8s.io/v1, AdmissionReview
 * v1), for creates: each MutatingWebhookConfiguration's webhooks in order (configurations by name),
 * then every ValidatingWebhookConfiguration's. A webhook is called when a rule matches (operations,
 * apiGroups, apiVersions, resources, scope) and its namespaceSelector (the namespace's labels) and
 * objectSelector (the object's labels) take the object; over HTTPS to `clientConfig.url`, trusting
 * `caBundle`, within `timeoutSeconds` (default 10). A JSONPatch answer is applied; a denial is the
 * API server's error (`admission webhook "NAME" denied the request: ...`, the answer's code or
 * 400); a webhook that cannot be called is skipped with failurePolicy Ignore and fails the request
 * with Fail (the default), as kube-apiserver does. A `service` reference cannot be reached from
 * the sandbox (no Service runs): it counts as a webhook that cannot be called.
 */
import { randomUUID } from 'node:crypto';
import fastJsonPatch, { type Operation } from 'fast-json-patch';
import { Agent, request } from 'undici';
import { z } from 'zod';
import { type ResourceType, RESOURCE_TYPES, storageKey } from './kinds.ts';
import type { Json, JsonObject } from './openapi.ts';
import { matchLabels } from './selectors.ts';
import { ApiError } from './status.ts';
import type { Store } from './store.ts';
import { selectorOf } from './workload-pods.ts';

const ruleSchema = z
  .object({
    operations: z.array(z.string()).default([]),
    apiGroups: z.array(z.string()).default([]),
    apiVersions: z.array(z.string()).default([]),
    resources: z.array(z.string()).default([]),
    scope: z.string().default('*'),
  })
  .loose();
const webhookSchema = z
  .object({
    name: z.string(),
    clientConfig: z
      .object({
        url: z.string().optional(),
        caBundle: z.string().optional(),
        service: z.unknown().optional(),
      })
      .loose(),
    rules: z.array(ruleSchema).default([]),
    failurePolicy: z.enum(['Ignore', 'Fail']).default('Fail'),
    namespaceSelector: z.record(z.string(), z.unknown()).optional(),
    objectSelector: z.record(z.string(), z.unknown()).optional(),
    timeoutSeconds: z.number().int().min(1).max(30).default(10),
  })
  .loose();
type Webhook = z.infer<typeof webhookSchema>;

const responseSchema = z.object({
  response: z
    .object({
      uid: z.string(),
      allowed: z.boolean(),
      patchType: z.string().optional(),
      patch: z.string().optional(),
      status: z.object({ code: z.number().optional(), message: z.string().optional() }).loose().optional(),
    })
    .loose(),
});

const typeOf = (kind: string): ResourceType =>
  RESOURCE_TYPES.find((t) => t.kind === kind && t.group === 'admissionregistration.k8s.io')!;
const MUTATING = typeOf('MutatingWebhookConfiguration');
const VALIDATING = typeOf('ValidatingWebhookConfiguration');

const has = (list: string[], v: string) => list.includes('*') || list.includes(v);
const labelsOf = (o: JsonObject | undefined): Record<string, string> =>
  ((o?.metadata as JsonObject | undefined)?.labels as Record<string, string> | undefined) ?? {};

export interface AdmissionRequest {
  type: ResourceType;
  namespace: string;
  operation: 'CREATE';
  object: JsonObject;
  dryRun: boolean;
  user: string;
}

export class AdmissionWebhooks {
  readonly stats = { calls: 0, failures: 0 };

  constructor(private readonly store: Store) {}

  private hooks(type: ResourceType): { hook: Webhook; mutating: boolean }[] {
    const out: { hook: Webhook; mutating: boolean }[] = [];
    for (const [t, mutating] of [
      [MUTATING, true],
      [VALIDATING, false],
    ] as const) {
      const configs = this.store
        .list(storageKey(t), undefined)
        .map((s) => s.obj)
        .sort((a, b) =>
          String((a.metadata as JsonObject).name).localeCompare(String((b.metadata as JsonObject).name)),
        );
      for (const c of configs)
        for (const raw of Array.isArray(c.webhooks) ? c.webhooks : []) {
          const parsed = webhookSchema.safeParse(raw);
          if (parsed.success) out.push({ hook: parsed.data, mutating });
        }
    }
    return out.filter(({ hook }) =>
      hook.rules.some(
        (r) =>
          has(r.operations, 'CREATE') &&
          has(r.apiGroups, type.group) &&
          has(r.apiVersions, type.version) &&
          has(r.resources, type.plural) &&
          (r.scope === '*' || r.scope === (type.namespaced ? 'Namespaced' : 'Cluster')),
      ),
    );
  }

  private selects(hook: Webhook, req: AdmissionRequest): boolean {
    const ns = this.store.get(
      storageKey(RESOURCE_TYPES.find((t) => t.kind === 'Namespace' && !t.group)!),
      '',
      req.namespace,
    );
    const nsLabels = req.type.namespaced ? labelsOf(ns?.obj) : labelsOf(req.object);
    if (hook.namespaceSelector && !matchLabels(selectorOf(hook.namespaceSelector as JsonObject), nsLabels))
      return false;
    if (
      hook.objectSelector &&
      !matchLabels(selectorOf(hook.objectSelector as JsonObject), labelsOf(req.object))
    )
      return false;
    return true;
  }

  /** Whether any webhook would be called for this request (a create none takes can stay synchronous). */
  wants(req: AdmissionRequest): boolean {
    return this.hooks(req.type).some(({ hook }) => this.selects(hook, req));
  }

  /** The object as the mutating webhooks leave it; throws the API server's error on a denial. */
  async admit(req: AdmissionRequest): Promise<JsonObject> {
    let object = req.object;
    for (const { hook, mutating } of this.hooks(req.type)) {
      if (!this.selects(hook, req)) continue;
      let answer: z.infer<typeof responseSchema>['response'];
      try {
        answer = await this.call(hook, { ...req, object });
      } catch (err) {
        this.stats.failures++;
        if (hook.failurePolicy === 'Ignore') continue;
        throw new ApiError(
          500,
          'InternalError',
          `Internal error occurred: failed calling webhook "${hook.name}": failed to call webhook: ${(err as Error).message}`,
        );
      }
      if (!answer.allowed)
        throw new ApiError(
          answer.status?.code ?? 400,
          'BadRequest',
          `admission webhook "${hook.name}" denied the request: ${answer.status?.message ?? 'without explanation'}`,
        );
      if (!mutating || !answer.patch) continue;
      if (answer.patchType !== 'JSONPatch')
        throw new ApiError(
          500,
          'InternalError',
          `Internal error occurred: webhook "${hook.name}": unsupported patchType ${answer.patchType ?? ''}`,
        );
      try {
        const ops = JSON.parse(Buffer.from(answer.patch, 'base64').toString('utf8')) as Operation[];
        object = fastJsonPatch.applyPatch(structuredClone(object) as object, ops, true, false)
          .newDocument as JsonObject;
      } catch (err) {
        throw new ApiError(
          500,
          'InternalError',
          `Internal error occurred: webhook "${hook.name}" returned a patch that does not apply: ${(err as Error).message}`,
        );
      }
    }
    return object;
  }

  private async call(
    hook: Webhook,
    req: AdmissionRequest,
  ): Promise<z.infer<typeof responseSchema>['response']> {
    this.stats.calls++;
    const url = hook.clientConfig.url;
    if (!url) throw new Error('a service reference cannot be reached from the sandbox (no Service runs)');
    if (!url.startsWith('https://')) throw new Error(`webhook url must be https: ${url}`);
    const ca = hook.clientConfig.caBundle
      ? Buffer.from(hook.clientConfig.caBundle, 'base64').toString('utf8')
      : undefined;
    const dispatcher = new Agent({ connect: { ...(ca ? { ca } : {}) }, connections: 1 });
    const uid = randomUUID();
    const t = req.type;
    const meta = (req.object.metadata as JsonObject | undefined) ?? {};
    const review = {
      apiVersion: 'admission.k8s.io/v1',
      kind: 'AdmissionReview',
      request: {
        uid,
        kind: { group: t.group, version: t.version, kind: t.kind },
        resource: { group: t.group, version: t.version, resource: t.plural },
        requestKind: { group: t.group, version: t.version, kind: t.kind },
        requestResource: { group: t.group, version: t.version, resource: t.plural },
        ...(meta.name ? { name: meta.name } : {}),
        namespace: req.namespace,
        operation: req.operation,
        userInfo: { username: req.user || 'system:anonymous' },
        object: req.object as Json,
        oldObject: null,
        dryRun: req.dryRun,
        options: { apiVersion: 'meta.k8s.io/v1', kind: 'CreateOptions' },
      },
    };
    try {
      const res = await request(url, {
        method: 'POST',
        dispatcher,
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(review),
        headersTimeout: hook.timeoutSeconds * 1000,
        bodyTimeout: hook.timeoutSeconds * 1000,
        signal: AbortSignal.timeout(hook.timeoutSeconds * 1000),
      });
      const text = await res.body.text();
      if (res.statusCode !== 200) throw new Error(`the server responded with status ${res.statusCode}`);
      const parsed = responseSchema.safeParse(JSON.parse(text));
      if (!parsed.success) throw new Error('the response is not an AdmissionReview');
      if (parsed.data.response.uid !== uid) throw new Error(`expected response.uid="${uid}"`);
      return parsed.data.response;
    } finally {
      await dispatcher.close();
    }
  }
}
