/** The most writes to one pool within any window of `ms` (writes in time order, per pool). */
export function mostWritesWithin(writes: readonly { pool: string; at: number }[], ms: number): number {
  let most = 0;
  const byPool = new Map<string, number[]>();
  for (const w of writes) {
    const times = byPool.get(w.pool);
    if (times) times.push(w.at);
    else byPool.set(w.pool, [w.at]);
  }
  for (const times of byPool.values()) {
    for (let a = 0, b = 0; b < times.length; b++) {
      while (times[b]! - times[a]! >= ms) a++;
      most = Math.max(most, b - a + 1);
    }
  }
  return most;
}
