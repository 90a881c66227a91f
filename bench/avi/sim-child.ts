/**
 * The Avi Controller simulator in a process of its own, for benchmarks (a real controller is
 * another machine: its work must not share the measured controller's event loop). Driven over the
 * IPC channel by bench/avi/sim-process.ts; answers each request `{ id, op, ... }` with `{ id, result }`
 * or `{ id, error }`. Exits when its parent goes.
 */
import { AviSimulator } from '../../sim/avi/simulator.ts';
import type { SimRequest } from './sim-process.ts';

const sim = new AviSimulator();

async function answer(m: SimRequest): Promise<unknown> {
  switch (m.op) {
    case 'start':
      return sim.start();
    case 'latency':
      sim.faults.latencyMs = m.ms;
      return null;
    case 'stats':
      return { calls: sim.stats.calls, writes: sim.stats.writes, maxInflight: sim.stats.maxInflight };
    case 'writeLog':
      // Times as this process's performance.now(); the parent rebases them with timeOrigin.
      return { timeOrigin: performance.timeOrigin, log: sim.writeLog.slice(m.from) };
    case 'count':
      return [...sim.objects(m.type).values()].filter((o) => m.field === undefined || o[m.field] === m.equals)
        .length;
    case 'get':
      return sim.objects(m.type).get(m.name) ?? null;
    case 'close':
      await sim.close();
      setImmediate(() => process.exit(0));
      return null;
  }
}

process.on('message', (m: SimRequest) => {
  answer(m).then(
    (result) => process.send!({ id: m.id, result }),
    (err: unknown) => process.send!({ id: m.id, error: err instanceof Error ? err.message : String(err) }),
  );
});
process.on('disconnect', () => process.exit(0));
