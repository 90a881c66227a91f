// Runs a command and prints the CPU of every process it starts, grouped by command line: each
// process's user + system time read from /proc every 100 ms (the last reading before it ends),
// its descendants only. What bench/README.md's "where the CPU goes" tables come from:
//
//   node bench/process-cpu.mjs npm test
//
// A process shorter than 100 ms may be missed, and one's last 100 ms are not counted: the figures
// are a floor. Linux only. It stops when the command does.
import { spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import process from 'node:process';
import { clearInterval, setInterval } from 'node:timers';

const [cmd, ...args] = process.argv.slice(2);
if (!cmd) {
  process.stderr.write('usage: node bench/process-cpu.mjs COMMAND [ARGS...]\n');
  process.exit(2);
}
const child = spawn(cmd, args, { stdio: ['ignore', 'inherit', 'inherit'] });
/** pid -> its parent, for every process seen. */
const parents = new Map();
/** pid -> { ms, line } of the command's descendants. */
const seen = new Map();

const descends = (pid) => {
  for (let p = pid, hops = 0; p && hops < 64; p = parents.get(p), hops++) if (p === child.pid) return true;
  return false;
};

function sample() {
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const pid = Number(entry);
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      parents.set(pid, Number(fields[1]));
      if (!seen.has(pid) && !descends(pid)) continue;
      // utime + stime, in clock ticks of 10 ms.
      const ms = (Number(fields[11]) + Number(fields[12])) * 10;
      const known = seen.get(pid);
      if (known) known.ms = Math.max(known.ms, ms);
      else seen.set(pid, { ms, line: readFileSync(`/proc/${entry}/cmdline`, 'utf8').replace(/\0/g, ' ') });
    } catch {
      // Gone between the listing and the read.
    }
  }
}

const timer = setInterval(sample, 100);
child.on('exit', (code) => {
  clearInterval(timer);
  const groups = new Map();
  for (const { ms, line } of seen.values()) {
    // Temporary paths and long numbers (ports, pids) differ between runs of one kind.
    const key = line
      .replace(/\/tmp\/\S+/g, 'TMP')
      .replace(/\d{4,}/g, 'N')
      .slice(0, 100);
    const g = groups.get(key) ?? { n: 0, ms: 0 };
    g.n++;
    g.ms += ms;
    groups.set(key, g);
  }
  const total = [...groups.values()].reduce((s, g) => s + g.ms, 0);
  process.stderr.write(`process-cpu: ${seen.size} processes, ${(total / 1000).toFixed(1)} s of CPU\n`);
  for (const [key, g] of [...groups].sort((a, b) => b[1].ms - a[1].ms).slice(0, 40))
    process.stderr.write(`${(g.ms / 1000).toFixed(1).padStart(8)} s ${String(g.n).padStart(5)}  ${key}\n`);
  process.exit(code ?? 1);
});
