/** Text as AS3 takes it in remarks and metadata. Pure. */

/** AS3 remarks: at most 64 characters, no control characters, quotes or backslashes. */
export function remark(text: string): string {
  // eslint-disable-next-line no-control-regex
  return text.replace(/[\u0000-\u001f"\\\u007f]/g, '_').slice(0, 64);
}

export type Meta = Record<string, { value: string }>;

/** AS3 metadata: string values under names. */
export const meta = (entries: Record<string, string>): Meta =>
  Object.fromEntries(Object.entries(entries).map(([k, v]) => [k, { value: v }]));

/**
 * The object an AS3 pointer names (a name, `{use}`, or `/tenant/application/name`: its last
 * segment), or none.
 */
export const pointedName = (p: unknown): string | undefined => {
  const ptr =
    typeof p === 'string'
      ? p
      : typeof (p as { use?: unknown } | undefined)?.use === 'string'
        ? (p as { use: string }).use
        : undefined;
  return ptr?.startsWith('/') ? ptr.split('/').pop() : ptr;
};

/** Whether a service lists the iRule of that name (by name or path) among its `iRules`. */
export const listsIRule = (service: Record<string, unknown>, name: string): boolean =>
  Array.isArray(service.iRules) && service.iRules.some((r) => pointedName(r) === name);

/** A DNS name or wildcard of the validation boundary, lowercase. */
const HOST = /^(\*\.)?[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*$/;

/**
 * A hostname as one literal Tcl word of an iRule (braced: nothing in it is substituted). Names
 * come from the model, validated at the boundary; anything else is a bug and is never written.
 */
export function tclHost(h: string, what: string): string {
  if (!HOST.test(h)) throw new Error(`not a ${what}: ${JSON.stringify(h)}`);
  return `{${h}}`;
}

/** An absolute BIG-IP path (`/tenant/application/name`) of letters, digits, `_`, `.` and `-`. */
const PATH = /^\/[A-Za-z0-9_.-]+(\/[A-Za-z0-9_.-]+)+$/;

/**
 * A BIG-IP path as one Tcl word of an iRule (nothing in it is substituted). Paths come from the
 * model's own (validated) names; anything else is a bug and is never written.
 */
export function tclPath(p: string): string {
  if (!PATH.test(p)) throw new Error(`not a BIG-IP path: ${JSON.stringify(p)}`);
  return p;
}
