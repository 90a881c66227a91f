/**
 * Keys of JSON objects as data: `__proto__` is an ordinary key in JSON and in every Kubernetes
 * object (a ConfigMap's data, a label), so it is read and written as an own property, never as
 * the object's prototype (an assignment `o['__proto__'] = v` would drop it silently).
 */
import type { Json, JsonObject } from './openapi.ts';

/** The own value of a key (undefined when absent; never an inherited one). */
export const getKey = (o: JsonObject, k: string): Json | undefined =>
  Object.prototype.hasOwnProperty.call(o, k) ? o[k] : undefined;

/** Sets a key as an own, enumerable property. */
export function setKey(o: JsonObject, k: string, v: Json): void {
  if (k === '__proto__')
    Object.defineProperty(o, k, { value: v, enumerable: true, writable: true, configurable: true });
  else o[k] = v;
}
