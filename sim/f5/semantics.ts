/**
 * What AS3 checks in a declaration after its schema: pointers (`use`) to objects that are not
 * declared (pools, policies, iRules, TLS profiles, CA bundles and certificates they name) (in the application, or at an absolute `/tenant/application/name` of the same tenant or
 * of `/Common/Shared`: AS3 points into no other tenant), an iRule past the device's size, and the
 * simulator's injected faults (objects it is told to refuse).
 */
type Json = Record<string, unknown>;

/** The largest iRule text the device takes (UTF-8 bytes): 64 KiB less one. */
const MAX_IRULE_BYTES = 65_535;

/** What AS3 finds after the schema: pointers to objects that are not declared, injected faults. */
export function semanticProblems(
  adc: Json,
  rejectObjects: ReadonlySet<string>,
  /** Where absolute pointers resolve (a per-application declaration: the tenant it goes into). */
  scope: Json = adc,
): string[] {
  const out: string[] = [];
  for (const [tName, t] of Object.entries(adc)) {
    if ((t as Json | null)?.class !== 'Tenant') continue;
    for (const [aName, a] of Object.entries(t as Json)) {
      const app = a as Json | null;
      if (app?.class !== 'Application') continue;
      // A pointer names an object of this application, or `/tenant/application/name` in this
      // tenant or in /Common/Shared.
      const has = (name: unknown, cls: string) => {
        if (typeof name !== 'string') return false;
        if (!name.startsWith('/')) return (app[name] as Json | undefined)?.class === cls;
        const [, t2 = '', a2 = '', n2 = ''] = name.split('/');
        if (t2 !== tName && !(t2 === 'Common' && a2 === 'Shared')) return false;
        return (
          (((scope[t2] as Json | undefined)?.[a2] as Json | undefined)?.[n2] as Json | undefined)?.class ===
          cls
        );
      };
      const ref = (p: unknown) => (typeof p === 'string' ? p : (p as { use?: unknown } | undefined)?.use);
      for (const [name, raw] of Object.entries(app)) {
        const o = raw as Json | null;
        if (!o || typeof o !== 'object') continue;
        const at = `/${tName}/${aName}/${name}`;
        if (rejectObjects.has(name)) out.push(`${at}: injected fault`);
        // BIG-IP keeps an iRule's text under 64 KiB.
        if (
          o.class === 'iRule' &&
          typeof o.iRule === 'string' &&
          Buffer.byteLength(o.iRule) > MAX_IRULE_BYTES
        )
          out.push(
            `${at}/iRule: ${Buffer.byteLength(o.iRule)} bytes; an iRule is at most ${MAX_IRULE_BYTES}`,
          );
        if (String(o.class).startsWith('Service_') && o.pool !== undefined && !has(ref(o.pool), 'Pool')) {
          out.push(`${at}/pool: contains path to non-existing object "${String(ref(o.pool))}"`);
        }
        if (o.policyEndpoint !== undefined && !has(ref(o.policyEndpoint), 'Endpoint_Policy')) {
          out.push(
            `${at}/policyEndpoint: contains path to non-existing object "${String(ref(o.policyEndpoint))}"`,
          );
        }
        ((Array.isArray(o.iRules) ? o.iRules : []) as unknown[]).forEach((r, i) => {
          if (!has(ref(r), 'iRule'))
            out.push(`${at}/iRules/${i}: contains path to non-existing object "${String(ref(r))}"`);
        });
        // TLS profiles and what they point at (a string pointer, or `{use}`; `{bigip}` and the
        // built-in `generic`/`none` bundles are the device's own).
        const pointers: [string, unknown, string][] = [
          ['serverTLS', o.serverTLS, 'TLS_Server'],
          ['clientTLS', o.clientTLS, 'TLS_Client'],
          ['trustCA', o.trustCA, 'CA_Bundle'],
          ['authenticationTrustCA', o.authenticationTrustCA, 'CA_Bundle'],
          ['clientCertificate', o.clientCertificate, 'Certificate'],
        ];
        for (const [field, p, cls] of pointers) {
          const target = ref(p);
          if (p === undefined || p === 'generic' || p === 'none' || target === undefined) continue;
          if (!has(target, cls))
            out.push(`${at}/${field}: contains path to non-existing object "${String(target)}"`);
        }
        if (o.class === 'Endpoint_Policy') {
          ((o.rules ?? []) as Json[]).forEach((rule, i) =>
            ((rule.actions ?? []) as Json[]).forEach((act, j) => {
              const pool = ref((act.select as Json | undefined)?.pool);
              if (pool !== undefined && !has(pool, 'Pool')) {
                out.push(
                  `${at}/rules/${i}/actions/${j}/select/pool: contains path to non-existing object "${String(pool)}"`,
                );
              }
            }),
          );
        }
      }
    }
  }
  return out;
}
