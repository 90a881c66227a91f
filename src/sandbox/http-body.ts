/**
 * Request bodies: size limit (3 MiB, as the real server), media types, JSON or YAML decoding.
 */
import type { IncomingMessage } from 'node:http';
import type { Json, OpenApi } from './openapi.ts';
import type { PatchType } from './registry.ts';
import { decodeProtobufBody, KUBE_PROTOBUF } from './protobuf.ts';
import { ApiError, badRequest, entityTooLarge, unsupportedMediaType } from './status.ts';
import { parseYamlOffThread, textNestsDeeperThan, YamlInputError } from '../runtime/yaml-input.ts';

export const MAX_BODY_BYTES = 3 * 1024 * 1024;

const OBJECT_TYPES = ['application/json', 'application/yaml'];
const PATCH_TYPES: Record<string, PatchType> = {
  'application/json-patch+json': 'json',
  'application/merge-patch+json': 'merge',
  'application/strategic-merge-patch+json': 'strategic',
  'application/apply-patch+yaml': 'apply',
};

export function mediaType(req: IncomingMessage): string {
  return (req.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
}

export async function readBody(req: IncomingMessage, limit = MAX_BODY_BYTES): Promise<Buffer> {
  const declared = Number(req.headers['content-length'] ?? 0);
  if (declared > limit) {
    req.resume();
    throw entityTooLarge(limit);
  }
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > limit) {
      req.resume();
      throw entityTooLarge(limit);
    }
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks);
}

/**
 * How deep a body may nest maps and lists (the API server's JSON decoder stops at 10,000; no
 * object comes near either). Deeper is a 400, checked before anything recursive reads it.
 */
export const MAX_BODY_DEPTH = 1000;

const BODY_LIMITS = { maxBytes: MAX_BODY_BYTES, maxDepth: MAX_BODY_DEPTH, maxAliases: 100 };

async function decode(raw: Buffer, yaml: boolean, what: string): Promise<Json> {
  const text = raw.toString('utf8');
  if (!text.trim()) throw badRequest(`${what}: the request body is empty`);
  if (!yaml && textNestsDeeperThan(text, MAX_BODY_DEPTH))
    throw badRequest(`${what}: json: exceeded max depth of ${MAX_BODY_DEPTH}`);
  try {
    if (!yaml) return JSON.parse(text) as Json;
    // YAML in linear time, duplicate keys refused, aliases and depth bounded, a long text on a
    // worker thread (yaml-input.ts): one client's megabytes never stall the others.
    const docs = await parseYamlOffThread(text, BODY_LIMITS);
    if (docs.length > 1) throw new YamlInputError('syntax', `${docs.length} documents where one is expected`);
    return (docs[0] ?? null) as Json;
  } catch (err) {
    const msg = err instanceof Error ? err.message.split('\n')[0] : String(err);
    const why = err instanceof YamlInputError && err.problem === 'depth' ? `exceeded max depth: ${msg}` : msg;
    throw badRequest(`${what}: ${yaml ? 'yaml' : 'json'} parse error: ${why}`);
  }
}

/** A create or update body: JSON, YAML, or Kubernetes protobuf (a built-in kind). */
export async function decodeObjectBody(req: IncomingMessage, raw: Buffer, openapi?: OpenApi): Promise<Json> {
  const type = mediaType(req) || 'application/json';
  if (type === KUBE_PROTOBUF) return decodeProtobufBody(raw, openapi);
  if (!OBJECT_TYPES.includes(type)) throw unsupportedMediaType(type, [...OBJECT_TYPES, KUBE_PROTOBUF]);
  return decode(raw, type === 'application/yaml', "couldn't get version/kind");
}

export async function decodePatchBody(
  req: IncomingMessage,
  raw: Buffer,
): Promise<{ type: PatchType; patch: Json }> {
  const media = mediaType(req);
  const type = PATCH_TYPES[media];
  if (!type) {
    throw new ApiError(
      415,
      'UnsupportedMediaType',
      `the server does not support patch type ${JSON.stringify(media)}: supported are ${Object.keys(PATCH_TYPES).join(', ')}`,
    );
  }
  // An apply configuration is YAML (JSON is YAML).
  return { type, patch: await decode(raw, type === 'apply', 'error decoding patch') };
}

/** DeleteOptions, optional. */
export async function decodeDeleteBody(
  req: IncomingMessage,
  raw: Buffer,
  openapi?: OpenApi,
): Promise<Json | undefined> {
  if (raw.length === 0 || !raw.toString('utf8').trim()) return undefined;
  const type = mediaType(req) || 'application/json';
  // client-go's typed clients (Helm's release Secrets) send DeleteOptions in protobuf.
  if (type === KUBE_PROTOBUF)
    return decodeProtobufBody(raw, openapi, (_v, kind) =>
      kind === 'DeleteOptions' ? 'io.k8s.apimachinery.pkg.apis.meta.v1.DeleteOptions' : undefined,
    );
  if (!OBJECT_TYPES.includes(type)) throw unsupportedMediaType(type, [...OBJECT_TYPES, KUBE_PROTOBUF]);
  return decode(raw, type === 'application/yaml', "couldn't get version/kind");
}
