/** Dotted version numbers (22.1.3, 3.56.0-7) compared as numbers, part by part. Pure. */

/** Whether `a` is below `b` (22.1.3 < 30.2.1; 3.9.0 < 3.47.0; a missing part counts 0). */
export function versionBelow(a: string, b: string): boolean {
  const x = a.split(/[.-]/).map(Number);
  const y = b.split(/[.-]/).map(Number);
  for (let i = 0; i < Math.max(x.length, y.length); i++) {
    const d = (x[i] ?? 0) - (y[i] ?? 0);
    if (d !== 0) return d < 0;
  }
  return false;
}
