/**
 * Small shared rules of the sandbox's objects: the time an API server stamps (RFC 3339, whole
 * seconds), and an object without its metadata and status (what a generation counts).
 */
import type { JsonObject } from './openapi.ts';

export function now(): string {
  return new Date().toISOString().replace(/\.\d{3}Z$/, 'Z');
}

export function withoutMetaAndStatus(o: JsonObject): JsonObject {
  const { metadata, status, ...rest } = o;
  void metadata;
  void status;
  return rest;
}
