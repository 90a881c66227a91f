/**
 * Server-side apply's conflicts as the API server reports them: a 409 naming each manager and
 * field (`.spec.replicas`, `.spec.containers[name="c"].image`), one cause per field.
 */
import type { Json } from './openapi.ts';
import { ApiError } from './status.ts';

/** A path as the API server writes it in conflict messages: `.spec.replicas`, `.spec.containers[name="c"].image`. */
function pathText(path: string[]): string {
  return path
    .filter((el) => el !== '.')
    .map((el) => {
      if (el.startsWith('f:')) return `.${el.slice(2)}`;
      if (el.startsWith('k:')) {
        const keys = JSON.parse(el.slice(2)) as Record<string, Json>;
        return `[${Object.entries(keys)
          .map(([k, v]) => `${k}=${JSON.stringify(v)}`)
          .join(',')}]`;
      }
      return `[=${el.slice(2)}]`;
    })
    .join('');
}

export function conflictError(
  kind: string,
  name: string,
  conflicts: { manager: string; path: string[] }[],
): ApiError {
  const lines = conflicts.map((c) => `conflict with "${c.manager}": ${pathText(c.path)}`);
  const message =
    conflicts.length === 1
      ? `Apply failed with 1 conflict: ${lines[0]!}`
      : `Apply failed with ${conflicts.length} conflicts: ${lines.join('\n- ')}`;
  return new ApiError(409, 'Conflict', message, {
    kind,
    name,
    causes: conflicts.map((c) => ({
      reason: 'FieldManagerConflict',
      message: `conflict with "${c.manager}"`,
      field: pathText(c.path),
    })),
  });
}
