/**
 * Where a demo lives on loopback: nodes at 127.N.10.1-3, Pods at 127.N.20.x, VIPs in
 * 127.N.30.0/24, for the first N from 1 to 9 that no other demo (another clone's `npm start`, or
 * the suite's own demo test) holds: two demos never collide and no test uses 127.1-9.x. A range is
 * held when its first Pod's address answers on the app's port.
 */
import { createServer } from 'node:net';

export interface DemoRange {
  /** The second octet. */
  n: number;
  node: (i: number) => string;
  pod: (i: number) => string;
  /** The VIP range, and an address in it. */
  cidr: string;
  vip: (i: number) => string;
}

export const demoRange = (n: number): DemoRange => ({
  n,
  node: (i) => `127.${n}.10.${i}`,
  pod: (i) => `127.${n}.20.${i}`,
  cidr: `127.${n}.30.0/24`,
  vip: (i) => `127.${n}.30.${i}`,
});

/** Whether an address and port can be listened on now (nothing holds them). */
function free(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = createServer();
    s.once('error', () => resolve(false));
    s.listen({ host, port, exclusive: true }, () => s.close(() => resolve(true)));
  });
}

/** The first range free on `port` (the app's), undefined when all nine are taken. */
export async function freeDemoRange(port: number): Promise<DemoRange | undefined> {
  for (let n = 1; n <= 9; n++) {
    const r = demoRange(n);
    if ((await free(r.pod(1), port)) && (await free(r.vip(1), port))) return r;
  }
  return undefined;
}
