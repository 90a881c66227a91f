/**
 * The baseline of the controller benchmark, in a process of its own: a bare client-node informer
 * on all Pods that notes, for each update carrying a `bench.npl-lb.io/sent-at` annotation it has not
 * seen, how long ago (wall clock) the change was sent. Prints "ready" once synced; prints the
 * latencies as JSON and exits when its standard input closes.
 *   node --import tsx bench/controller/bare-informer.ts <kubeconfig>
 */
import { CoreV1Api, KubeConfig, makeInformer, type V1Pod } from '@kubernetes/client-node';

const kc = new KubeConfig();
kc.loadFromFile(process.argv[2]!);
const latencies: number[] = [];
const seen = new Map<string, string>();
const informer = makeInformer(kc, '/api/v1/pods', () =>
  kc.makeApiClient(CoreV1Api).listPodForAllNamespaces(),
);
informer.on('update', (p: V1Pod) => {
  const sent = p.metadata?.annotations?.['bench.npl-lb.io/sent-at'];
  const name = p.metadata?.name ?? '';
  if (!sent || seen.get(name) === sent) return;
  seen.set(name, sent);
  latencies.push(Date.now() - Number(sent));
});
await informer.start();
console.log('ready');
process.stdin.resume();
process.stdin.on('end', async () => {
  await informer.stop();
  console.log(JSON.stringify(latencies));
  process.exit(0);
});
