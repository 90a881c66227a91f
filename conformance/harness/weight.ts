/**
 * The upstream suite's weighted distribution check (conformance/utils/weight): 500 requests, 10
 * at a time, each backend's share within 5 points of its weight; up to 10 tries before failing.
 * `send` makes one request and names the backend (the Pod's Deployment) that answered it. As
 * upstream, a request that fails (a 503 while a backend's pool is still filling) fails that try,
 * not the test: the try is logged and the next one starts. Upstream makes sure the backend is
 * reachable (an eventually consistent response) before its tries; after a try that failed on a
 * request, `reachable` does so again before the next one, so that a pool a loaded machine's
 * health checks took down for a moment (the device says which, suite.ts) is not ten tries spent in
 * its few seconds down. It never weakens the check: each try still counts 500 answers.
 */
import { ConformanceFailure } from './status.ts';

export async function expectWeightedDistribution(
  want: Record<string, number>,
  send: () => Promise<string>,
  log: (line: string) => void,
  reachable?: () => Promise<void>,
): Promise<void> {
  let last = '';
  for (let attempt = 1; attempt <= 10; attempt++) {
    const seen: Record<string, number> = {};
    let next = 0;
    let stop = false;
    const worker = async () => {
      while (next < 500 && !stop) {
        next++;
        const backend = await send();
        if (!(backend in want)) throw new ConformanceFailure(`answered by an unexpected backend ${backend}`);
        seen[backend] = (seen[backend] ?? 0) + 1;
      }
    };
    const stopping = () =>
      worker().catch((err: unknown) => {
        stop = true;
        throw err;
      });
    // Every worker ends before the next try: none still counts into this one's tally.
    const results = await Promise.allSettled(Array.from({ length: 10 }, stopping));
    const rejected = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
    const failed = rejected && `error while sending requests: ${(rejected.reason as Error).message}`;
    const errs = failed
      ? [failed]
      : Object.entries(want).flatMap(([b, w]) => {
          const got = (seen[b] ?? 0) / 500;
          return Math.abs(got - w) > 0.05
            ? [`${b} got ${got.toFixed(3)} of the traffic, want ${w} (+/-0.05)`]
            : [];
        });
    if (!errs.length) return;
    last = errs.join('; ');
    log(`distribution try ${attempt}/10: ${last}`);
    if (failed && reachable && attempt < 10) await reachable();
  }
  throw new ConformanceFailure(`weighted distribution failed 10 times: ${last}`);
}

/** The Deployment of a Pod named as a ReplicaSet names it (`<deployment>-<hash>-<n>`). */
export const deploymentOf = (pod: string): string => pod.split('-').slice(0, -2).join('-');
