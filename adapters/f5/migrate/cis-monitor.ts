/**
 * CIS's pool settings as BackendPolicy settings: `loadBalancingMethod`, the virtual server's
 * `persistenceProfile`, and a BIG-IP `monitor` (its `send` string read as the request it is, its
 * `timeout` - how long a member may fail before it is down - read as a count of failed checks).
 * Pure.
 */
import { z } from 'zod';
import { clampInt, type PolicySettings } from '../../../src/migrate/objects.ts';
import type { MigrationNote } from '../../../src/migrate/result.ts';

type Note = Omit<MigrationNote, 'from'>;
type Check = NonNullable<PolicySettings['healthCheck']>;

const METHODS: Record<string, PolicySettings['algorithm']> = {
  'round-robin': 'RoundRobin',
  'least-connections-member': 'LeastConnections',
  'least-connections-node': 'LeastConnections',
};
const PERSISTENCE: Record<string, 'Cookie' | 'SourceIP'> = { cookie: 'Cookie', 'source-address': 'SourceIP' };

export const monitorSchema = z.looseObject({
  type: z.string().catch(''),
  send: z.string().optional().catch(undefined),
  recv: z.string().optional().catch(undefined),
  interval: z.unknown().optional(),
  timeout: z.unknown().optional(),
  name: z.string().optional().catch(undefined),
  reference: z.string().optional().catch(undefined),
});
export type Monitor = z.infer<typeof monitorSchema>;

/** `GET /path HTTP/1.1\r\nHost: a\r\n\r\n` (escapes written out or not) -> method, path, headers. */
export function parseSend(
  send: string,
): { method: string; path: string; headers: { name: string; value: string }[] } | undefined {
  const text = send.replace(/\\r/g, '\r').replace(/\\n/g, '\n');
  if (/^\/\S*$/.test(text)) return { method: 'GET', path: text, headers: [] };
  const m = /^([A-Z]+) +(\/\S*)(?: +HTTP\/1\.[01])? *(?:\r?\n([\s\S]*))?$/.exec(text);
  if (!m) return undefined;
  const headers: { name: string; value: string }[] = [];
  for (const line of (m[3] ?? '').split(/\r?\n/)) {
    if (line === '') break;
    const h = /^([!#$%&'*+.^_`|~0-9A-Za-z-]+): *([!-~](?:[ !-~]*[!-~])?) *$/.exec(line);
    if (!h) return undefined;
    if (h[1]!.toLowerCase() !== 'connection') headers.push({ name: h[1]!, value: h[2]! });
  }
  return { method: m[1]!, path: m[2]!, headers };
}

function timing(m: Monitor, check: Check, notes: Note[]): void {
  const interval = clampInt(m.interval, 1, 300);
  if (interval !== undefined) check.intervalSeconds = interval;
  const timeout = clampInt(m.timeout, 1, 3000);
  if (timeout === undefined) return;
  const every = interval ?? 10;
  check.timeoutSeconds = Math.min(timeout, every);
  check.unhealthyThreshold = Math.min(10, Math.max(1, Math.floor(timeout / every)));
  notes.push({
    kind: 'changed',
    why: `a BIG-IP timeout of ${timeout} s (down when no check passed for that long) is ${check.unhealthyThreshold} failed check(s) every ${every} s, each given ${check.timeoutSeconds} s`,
  });
}

/** One monitor as a check, or notes saying why it is not one. */
export function monitorCheck(m: Monitor): { check?: Check; notes: Note[] } {
  const notes: Note[] = [];
  if (m.name && m.reference === 'bigip')
    return {
      notes: [
        {
          kind: 'by hand',
          why: `monitor ${m.name} is on the BIG-IP: write its check in spec.healthCheck (docs/health-checks.md)`,
        },
      ],
    };
  const type = m.type.toLowerCase();
  if (type === 'tcp') {
    const check: Check = { type: 'TCP' };
    timing(m, check, notes);
    return { check, notes };
  }
  if (type !== 'http')
    return {
      notes: [
        {
          kind: 'no equivalent',
          why: `a ${m.type || 'typeless'} monitor: npl-lb checks members by a plain HTTP GET or a TCP connect`,
        },
      ],
    };
  const req = parseSend(m.send ?? 'GET / HTTP/1.0');
  if (!req)
    return {
      notes: [
        {
          kind: 'by hand',
          why: `send ${JSON.stringify(m.send)} is not an HTTP request npl-lb can read: write spec.healthCheck`,
        },
      ],
    };
  const check: Check = {
    type: 'HTTP',
    path: req.path,
    ...(req.headers.length > 0 ? { headers: req.headers.slice(0, 8) } : {}),
  };
  if (req.method !== 'GET')
    notes.push({ kind: 'changed', why: `${req.method} is sent as GET (npl-lb's HTTP check)` });
  if (m.recv)
    notes.push({
      kind: 'changed',
      why: `recv ${JSON.stringify(m.recv)} is not matched: a 2xx or 3xx answer means up`,
    });
  timing(m, check, notes);
  return { check, notes };
}

/** A CIS pool's settings (its method, monitor or monitors) and the virtual server's persistence. */
export function poolSettings(
  pool: { loadBalancingMethod?: string; monitor?: Monitor; monitors: Monitor[] },
  persistenceProfile: string | undefined,
): { settings: PolicySettings; notes: Note[] } {
  const settings: PolicySettings = {};
  const notes: Note[] = [];
  const method = pool.loadBalancingMethod;
  if (method && METHODS[method]) settings.algorithm = METHODS[method];
  else if (method)
    notes.push({
      kind: 'no equivalent',
      why: `loadBalancingMethod ${method}: npl-lb balances by round-robin, least connections or source hash`,
    });
  if (persistenceProfile && persistenceProfile !== 'none') {
    const type = PERSISTENCE[persistenceProfile];
    if (type) settings.sessionPersistence = { type };
    else
      notes.push({
        kind: 'no equivalent',
        why: `persistenceProfile ${persistenceProfile}: npl-lb keeps clients by cookie or source address`,
      });
  }
  const monitors = [...(pool.monitor ? [pool.monitor] : []), ...pool.monitors];
  const [first, ...rest] = monitors;
  if (first) {
    const r = monitorCheck(first);
    if (r.check) settings.healthCheck = r.check;
    notes.push(...r.notes);
  }
  if (rest.length > 0)
    notes.push({
      kind: 'no equivalent',
      why: `${rest.length} more monitor(s): a BackendPolicy has one check`,
    });
  return { settings, notes };
}
