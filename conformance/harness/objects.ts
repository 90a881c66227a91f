/**
 * The conformance harness's API client: objects of the upstream manifests created, patched, read
 * and deleted on the sandbox by their apiVersion and kind, as `kubectl` would find their REST paths.
 */
import { readFileSync } from 'node:fs';
import { parseAllDocuments } from 'yaml';
import { z } from 'zod';

export const objectSchema = z
  .object({
    apiVersion: z.string().min(1),
    kind: z.string().min(1),
    metadata: z.object({ name: z.string().min(1), namespace: z.string().optional() }).passthrough(),
  })
  .passthrough();
export type KubeObject = z.infer<typeof objectSchema>;

const CLUSTER_SCOPED = new Set(['Namespace', 'GatewayClass', 'Node', 'CustomResourceDefinition']);

function plural(kind: string): string {
  const k = kind.toLowerCase();
  if (k.endsWith('s')) return `${k}es`;
  if (/[^aeiou]y$/.test(k)) return `${k.slice(0, -1)}ies`;
  return `${k}s`;
}

/** The REST path of an object's collection (`name` given: of the object). */
export function restPath(
  o: Pick<KubeObject, 'apiVersion' | 'kind'> & { namespace?: string },
  name?: string,
): string {
  const base = o.apiVersion.includes('/') ? `/apis/${o.apiVersion}` : `/api/${o.apiVersion}`;
  const ns = CLUSTER_SCOPED.has(o.kind) ? '' : `/namespaces/${o.namespace ?? 'default'}`;
  return `${base}${ns}/${plural(o.kind)}${name ? `/${encodeURIComponent(name)}` : ''}`;
}

export const pathOf = (o: KubeObject): string =>
  restPath({ ...o, ...(o.metadata.namespace ? { namespace: o.metadata.namespace } : {}) }, o.metadata.name);

/**
 * The documents of a manifest file, prepared as the upstream suite's applier prepares them: every
 * Gateway of our GatewayClass, every GatewayClass of our controller.
 */
export interface ManifestNames {
  gatewayClassName: string;
  controllerName: string;
  /** What upstream's --usable-network-addresses and --unusable-network-addresses give. */
  usableAddresses?: string[];
  unusableAddresses?: string[];
}

type Address = { type?: string; value?: string };

/**
 * As upstream's applier: a Gateway's PLACEHOLDER_USABLE_ADDRS / PLACEHOLDER_UNUSABLE_ADDRS become
 * the given addresses, after those of the type `test/fake-invalid-type`. (Upstream also empties
 * the addresses of a Gateway with none of these; the harness leaves those as written, so
 * GatewayOptionalAddressValue really tests an address without a value.)
 */
function overlayAddresses(spec: Record<string, unknown>, names: ManifestNames): Record<string, unknown> {
  const addresses = (spec.addresses ?? []) as Address[];
  const usable = addresses.some((a) => a.value === 'PLACEHOLDER_USABLE_ADDRS');
  const unusable = addresses.some((a) => a.value === 'PLACEHOLDER_UNUSABLE_ADDRS');
  if (!usable && !unusable) return spec;
  const ip = (value: string): Address => ({ type: 'IPAddress', value });
  return {
    ...spec,
    addresses: [
      ...addresses.filter((a) => a.type === 'test/fake-invalid-type'),
      ...(unusable ? (names.unusableAddresses ?? []).map(ip) : []),
      ...(usable ? (names.usableAddresses ?? []).map(ip) : []),
    ],
  };
}

export function readManifests(file: URL, names: ManifestNames): KubeObject[] {
  const text = readFileSync(file, 'utf8')
    .replaceAll('{GATEWAY_CLASS_NAME}', names.gatewayClassName)
    .replaceAll('{GATEWAY_CONTROLLER_NAME}', names.controllerName);
  return parseAllDocuments(text)
    .map((d) => d.toJSON() as unknown)
    .filter((d) => d !== null && d !== undefined)
    .map((d) => {
      const o = objectSchema.parse(d);
      const spec = (o.spec ?? {}) as Record<string, unknown>;
      if (o.kind === 'Gateway')
        return { ...o, spec: { ...overlayAddresses(spec, names), gatewayClassName: names.gatewayClassName } };
      if (o.kind === 'GatewayClass') return { ...o, spec: { ...spec, controllerName: names.controllerName } };
      return o;
    });
}

export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

/** JSON requests to the sandbox. */
export class Api {
  constructor(readonly server: string) {}

  async request(
    method: string,
    path: string,
    body?: unknown,
    contentType = 'application/json',
  ): Promise<unknown> {
    const res = await fetch(this.server + path, {
      method,
      headers: { 'content-type': contentType },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await res.text();
    if (res.status >= 300)
      throw new ApiError(res.status, `${method} ${path}: ${res.status} ${text.slice(0, 300)}`);
    return text ? (JSON.parse(text) as unknown) : undefined;
  }

  create(o: KubeObject): Promise<unknown> {
    const { metadata } = o;
    return this.request(
      'POST',
      restPath({ ...o, ...(metadata.namespace ? { namespace: metadata.namespace } : {}) }),
      o,
    );
  }

  /** A plain-text answer (a Pod's log). */
  async text(path: string): Promise<string> {
    const res = await fetch(this.server + path);
    const text = await res.text();
    if (res.status >= 300) throw new ApiError(res.status, `GET ${path}: ${res.status} ${text.slice(0, 300)}`);
    return text;
  }

  /** The object as stored, or undefined when there is none. */
  async get(path: string): Promise<Record<string, unknown> | undefined> {
    try {
      return (await this.request('GET', path)) as Record<string, unknown>;
    } catch (err) {
      if (err instanceof ApiError && err.status === 404) return undefined;
      throw err;
    }
  }

  patch(path: string, body: unknown): Promise<unknown> {
    return this.request('PATCH', path, body, 'application/merge-patch+json');
  }

  /** Deletes; an object already gone is no error. */
  async delete(path: string): Promise<void> {
    try {
      await this.request('DELETE', path);
    } catch (err) {
      if (!(err instanceof ApiError && err.status === 404)) throw err;
    }
  }
}
