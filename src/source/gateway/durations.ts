/** The Gateway API's Duration (GEP-2257): up to four `<number><h|m|s|ms>` parts, in ms. Pure. */
export function durationMs(v: string): number | undefined {
  if (!/^([0-9]{1,5}(h|m|s|ms)){1,4}$/.test(v)) return undefined;
  const unit: Record<string, number> = { h: 3_600_000, m: 60_000, s: 1000, ms: 1 };
  let total = 0;
  for (const [, n, u] of v.matchAll(/([0-9]+)(ms|h|m|s)/g)) total += Number(n) * unit[u!]!;
  return total;
}
