/**
 * HAProxy's `show servers state` read as data: each server's operational and admin state and its
 * last check. Pure. (The Data Plane simulator reads it with code of its own.)
 */
import type { MemberHealth } from '../../src/adapter/contract.ts';

export interface ServerStateRow {
  backend: string;
  server: string;
  address: string;
  port: number;
  /** srv_op_state: 0 stopped, 1 starting, 2 running, 3 stopping. */
  opState: number;
  /** srv_admin_state: a bit field (maintenance 0x01|0x02|0x20, drain 0x08|0x10). */
  adminState: number;
  /** srv_uweight: the weight set by the user (0 drains). */
  weight: number;
  /** srv_check_status: HCHK_STATUS_* */
  checkStatus: number;
  /** srv_check_state: CHK_ST_* bits (0x02: a check is configured). */
  checkState: number;
}

// enum healthcheck_status of HAProxy's include/haproxy/check-t.h (2.4 to 3.x), by the names the
// stats page shows (L7OK for HCHK_STATUS_L7OKD). L57DATA and CHECKED are markers, never a result.
const CHECK_STATUS = [
  'UNK',
  'INI',
  'START',
  'CHECKED',
  'HANA',
  'SOCKERR',
  'L4OK',
  'L4TOUT',
  'L4CON',
  'L6OK',
  'L6TOUT',
  'L6RSP',
  'L7TOUT',
  'L7RSP',
  'L57DATA',
  'L7OK',
  'L7OKC',
  'L7STS',
  'PROCERR',
  'PROCTOUT',
  'PROCOK',
];

// SRV_ADMF_MAINT: forced, inherited, or by resolution. CMAINT (0x04) only records that the
// configuration said `disabled`: a server enabled since at runtime keeps it and is not in maintenance.
const MAINT = 0x01 | 0x02 | 0x20;
const DRAIN = 0x08 | 0x10;

/** Parses the answer to `show servers state [backend]` (format version 1); other lines are skipped. */
export function parseServersState(text: string): ServerStateRow[] {
  const lines = text.split('\n');
  const header = lines.find((l) => l.startsWith('# be_id'));
  if (!header) return [];
  const cols = header.slice(2).trim().split(/\s+/);
  const at = (name: string) => cols.indexOf(name);
  const idx = {
    be: at('be_name'),
    srv: at('srv_name'),
    addr: at('srv_addr'),
    op: at('srv_op_state'),
    admin: at('srv_admin_state'),
    w: at('srv_uweight'),
    cs: at('srv_check_status'),
    cst: at('srv_check_state'),
    port: at('srv_port'),
  };
  const rows: ServerStateRow[] = [];
  for (const line of lines) {
    if (line === '' || line.startsWith('#') || !/^\d+ /.test(line)) continue;
    const f = line.trim().split(/\s+/);
    if (f.length < cols.length - 2) continue;
    const n = (i: number) => Number(f[i] ?? NaN);
    rows.push({
      backend: f[idx.be]!,
      server: f[idx.srv]!,
      address: f[idx.addr]!,
      port: n(idx.port),
      opState: n(idx.op),
      adminState: n(idx.admin),
      weight: n(idx.w),
      checkStatus: n(idx.cs),
      checkState: n(idx.cst),
    });
  }
  return rows;
}

export function checkStatusName(code: number): string {
  return CHECK_STATUS[code] ?? `status ${code}`;
}

/** A row as a member's device-side state. */
export function rowHealth(r: ServerStateRow): Pick<MemberHealth, 'admin' | 'health' | 'reason'> {
  const admin =
    r.adminState & MAINT ? 'maint' : r.adminState & DRAIN || r.weight === 0 ? 'draining' : 'enabled';
  const checked = (r.checkState & 0x02) !== 0;
  const health = r.opState === 0 ? 'down' : checked ? 'up' : 'unchecked';
  return { admin, health, ...(checked ? { reason: checkStatusName(r.checkStatus) } : {}) };
}
