/**
 * What one reload of HAProxy costs in CPU, with our global as written (config.ts: HAProxy's unused
 * HTTP client told to load no CA) and without that line (HAProxy 2.6 then loads every system CA
 * at each start, reload and check). Each round starts HAProxy (HaproxyProcess, as the runtime
 * transport does) from the rendered configuration of a few pools and virtual services, reloads it
 * N times (each reload: `haproxy -c` of the file, then the master's reload, waited for until the
 * new worker answers) and reads the CPU of the master and the workers it reaped
 * (/proc/<master>/stat, self and children) and of the checks (this process's children). The two
 * variants alternate round by round; medians per reload. Loopback only; bounded by its counts.
 *
 *   node --import tsx bench/haproxy/reload-cost.ts [--reloads 20] [--rounds 3]
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { HTTPCLIENT_OFF, renderConfig } from '../../adapters/haproxy/config.ts';
import { adminSocket, configPath, HaproxyProcess } from '../../adapters/haproxy/process.ts';
import type { Pool, VirtualService } from '../../src/model/types.ts';
import { printTable, quantile } from '../http-load.ts';

const { values } = parseArgs({
  options: { reloads: { type: 'string', default: '20' }, rounds: { type: 'string', default: '3' } },
});
const RELOADS = Number(values.reloads);
const ROUNDS = Number(values.rounds);
const TICK = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim());

/** CPU (ms) of a process, its own and that of the children it has reaped. */
function cpuMs(pid: number | 'self'): { own: number; children: number } {
  const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  const t = (i: number) => (Number(f[i]) * 1000) / TICK;
  return { own: t(11) + t(12), children: t(13) + t(14) };
}

const pools: Pool[] = Array.from({ length: 20 }, (_, i) => ({
  name: `bench--default-web-${i}`,
  protocol: 'TCP',
  health: 'tcp',
  service: `default/web-${i}`,
  servicePort: '80',
  members: [{ address: '127.0.0.1', port: 20000 + i, node: 'n1', pod: `default/web-${i}-0`, enabled: true }],
}));
const vss: VirtualService[] = pools.map((p, i) => ({
  kind: 'l4',
  name: `bench--default-web-TCP-${i}`,
  protocol: 'TCP',
  vip: '127.0.83.1',
  port: 18300 + i,
  pool: p.name,
  source: `Service default/web-${i}`,
}));

async function round(withLine: boolean): Promise<number> {
  const dir = mkdtempSync(join(tmpdir(), 'npl-reload-cost-'));
  const paths = { bin: 'haproxy', workDir: dir };
  const text = renderConfig(pools, vss, [], {
    owner: 'bench',
    adminSocket: adminSocket(paths),
    healthChecks: false,
  });
  writeFileSync(configPath(paths), withLine ? text : text.replace(`${HTTPCLIENT_OFF}\n`, ''));
  const proc = new HaproxyProcess(paths);
  try {
    await proc.start();
    const master = proc.pid!;
    const [m0, s0] = [cpuMs(master), cpuMs('self')];
    for (let i = 0; i < RELOADS; i++) await proc.reload();
    const [m1, s1] = [cpuMs(master), cpuMs('self')];
    const total = m1.own - m0.own + (m1.children - m0.children) + (s1.children - s0.children);
    return total / RELOADS;
  } finally {
    await proc.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

const out = { with: [] as number[], without: [] as number[] };
for (let r = 0; r < ROUNDS; r++) {
  out.with.push(await round(true));
  out.without.push(await round(false));
}
const med = (xs: number[]) => quantile(xs, 0.5);
const what = `${RELOADS} reloads x ${ROUNDS} rounds, median per reload (check + master + worker)`;
printTable([
  ['CPU per reload, our global (httpclient.ssl.verify none)', `${med(out.with).toFixed(1)} ms`, what],
  ['CPU per reload, without that line', `${med(out.without).toFixed(1)} ms`, what],
  ['ratio', `${(med(out.with) / med(out.without)).toFixed(2)}x`, 'side by side, rounds alternating'],
]);
console.log(`JSON ${JSON.stringify(out)}`);
