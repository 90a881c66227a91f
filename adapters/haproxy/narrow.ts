/**
 * Narrowing a batch that HAProxy refuses to the changes that break it, so one bad object is
 * reported and the rest go live: candidates are validated before a reload (new binds are tried,
 * the whole file is checked with `haproxy -c`), and a refused file is bisected with `haproxy -c`
 * alone (no reload) until the culprits are found.
 */
import { createServer } from 'node:net';

/**
 * The items that cannot be added, given `accepts(subset)` that says whether the known-good base
 * plus `subset` is acceptable. Bisects: a half that passes is kept, one that fails is split again;
 * k culprits among n items cost O(k log n) checks. Order is kept.
 */
export async function narrowRefused<T>(items: T[], accepts: (subset: T[]) => Promise<boolean>): Promise<T[]> {
  const accepted: T[] = [];
  const walk = async (part: T[]): Promise<T[]> => {
    if (part.length === 0) return [];
    if (await accepts([...accepted, ...part])) {
      accepted.push(...part);
      return [];
    }
    if (part.length === 1) return part;
    const mid = Math.ceil(part.length / 2);
    const bad = await walk(part.slice(0, mid));
    return [...bad, ...(await walk(part.slice(mid)))];
  };
  return walk(items);
}

/**
 * Whether this host can listen on address:port, which a HAProxy reload needs for a new bind (a
 * VIP that is not on this host fails the reload, and with it every other change): the error code
 * when it cannot (EADDRNOTAVAIL, EADDRINUSE, EACCES), undefined when it can.
 */
export function bindError(address: string, port: number): Promise<string | undefined> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', (err: NodeJS.ErrnoException) => resolve(err.code ?? err.message));
    server.listen({ host: address, port, exclusive: true }, () => server.close(() => resolve(undefined)));
  });
}
