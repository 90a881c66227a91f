/**
 * Where a demo lives on loopback: nodes at 127.N.10.1-3, Pods in node i's Pod CIDR
 * (127.N.4i.0/24), VIPs in
 * 127.N.30.0/24, for the first N from 1 to 9 that no other demo (another clone's `npm start`, or
 * the suite's own demo test) holds: two demos never collide and no test uses 127.1-9.x. A demo
 * holds its range by listening on 127.N.0.1 (the claim), which two demos starting at once cannot
 * both do; a range whose first Pod or VIP address answers on the app's port is held too.
 */
import { createServer, type Server } from 'node:net';

export interface DemoRange {
  /** The second octet. */
  n: number;
  /** Lets the range go (the demo stops). */
  release: () => Promise<void>;
  node: (i: number) => string;
  /** Node i's Pod CIDR: the sandbox's kubelet gives the Pods it runs there addresses of it. */
  podCidr: (i: number) => string;
  /** The VIP range, and an address in it. */
  cidr: string;
  vip: (i: number) => string;
}

export const demoRange = (n: number): DemoRange => ({
  n,
  release: async () => {},
  node: (i) => `127.${n}.10.${i}`,
  podCidr: (i) => `127.${n}.${40 + i}.0/24`,
  cidr: `127.${n}.30.0/24`,
  vip: (i) => `127.${n}.30.${i}`,
});

/** The address the first Pod of node-1 gets. */
export const firstPod = (r: DemoRange): string => r.podCidr(1).replace(/\.0\/24$/, '.1');

/** Whether an address and port can be listened on now (nothing holds them). */
function free(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = createServer();
    s.once('error', () => resolve(false));
    s.listen({ host, port, exclusive: true }, () => s.close(() => resolve(true)));
  });
}

/** The claim of a range: a listening socket only one process can hold. */
function claim(n: number, port: number): Promise<Server | undefined> {
  return new Promise((resolve) => {
    const s = createServer((c) => c.destroy());
    s.once('error', () => resolve(undefined));
    s.listen({ host: `127.${n}.0.1`, port, exclusive: true }, () => resolve(s));
  });
}

/**
 * The first range free on `port` (the app's), claimed until `release`; undefined when all nine
 * are taken.
 */
export async function freeDemoRange(port: number): Promise<DemoRange | undefined> {
  for (let n = 1; n <= 9; n++) {
    const r = demoRange(n);
    const held = await claim(n, port);
    if (!held) continue;
    if ((await free(firstPod(r), port)) && (await free(r.vip(1), port)))
      return { ...r, release: () => new Promise<void>((done) => held.close(() => done())) };
    await new Promise<void>((done) => held.close(() => done()));
  }
  return undefined;
}
