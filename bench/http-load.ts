/**
 * Load helpers shared by the benchmarks: JSON requests to the sandbox over a pooled dispatcher,
 * bounded concurrency, and quantiles.
 */
import { Agent, fetch } from 'undici';

export const dispatcher = new Agent({ connections: 32 });

/** Sends a JSON body; a status of 300 or more is an error. */
export async function send(
  url: string,
  method: string,
  path: string,
  body: unknown,
  type = 'application/json',
): Promise<number> {
  const res = await fetch(url + path, {
    method,
    headers: { 'Content-Type': type },
    body: JSON.stringify(body),
    dispatcher,
  });
  await res.arrayBuffer();
  if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status}`);
  return res.status;
}

/** Runs `fn` over the items with at most `concurrency` in flight. */
export async function pool<T>(
  items: T[],
  concurrency: number,
  fn: (item: T) => Promise<unknown>,
): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < items.length) await fn(items[next++]!);
    }),
  );
}

export function quantile(xs: number[], q: number): number {
  const sorted = [...xs].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? Number.NaN;
}
