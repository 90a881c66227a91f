/**
 * `--forwarding none`: annotate only; something else forwards (or nothing, for consumers that only
 * read the annotation).
 */
import type { ForwardingBackend } from './types.ts';

export function noneBackend(): ForwardingBackend {
  return {
    name: 'none',
    bindsWildcard: false,
    start: async () => {},
    sync: async () => {},
    add: async () => {},
    remove: async () => {},
    stop: async () => {},
    cleanup: async () => {},
  };
}
