/**
 * Logs an operator can read: JSON lines with string levels (as AKO's and CIS's INFO/ERROR) and
 * ISO times; the controller says when its caches synced (with counts and how long it took) and
 * what each pass changed; a failed object gets one warn with its code, not one per pass.
 */
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { it } from 'node:test';
import { KubeConfig } from '@kubernetes/client-node';
import { MemoryAdapter } from '../../../adapters/memory/adapter.ts';
import { type CacheKind, ClusterCache } from '../../../src/controller/cluster-cache.ts';
import type { ListWatchSource } from '../../../src/kube/informer.ts';
import type { RawObject } from '../../../src/kube/raw-client.ts';
import { parseControllerConfig } from '../../../src/config/controller-config.ts';
import { NplController } from '../../../src/controller/controller.ts';
import { createLogger } from '../../../src/runtime/logger.ts';
import { Cluster, RecordingEvents } from '../../support/cluster.ts';
import { eventually, useSandbox } from '../../support/sandbox.ts';

it('string levels, ISO time, caches synced with counts, one line per pass, one warn per failed object', async (t) => {
  const lines: Record<string, unknown>[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      for (const l of chunk.toString().split('\n').filter(Boolean))
        lines.push(JSON.parse(l) as Record<string, unknown>);
      done();
    },
  });
  const log = createLogger({ name: 'controller', destination: sink });
  const { kc } = await useSandbox(t);
  const c = new Cluster(kc);
  await c.service('web', { type: 'LoadBalancer', enabled: null, ports: [{ name: 'http', port: 80 }] });
  const ctl = new NplController({
    kubeConfig: kc,
    config: parseControllerConfig(
      'clusterName: c1\ndefaultLoadBalancer: true\nvip: {cidrs: [192.0.2.0/24]}\n',
    ),
    adapter: new MemoryAdapter({
      owner: 'c1',
      fault: (ch) =>
        ch.kind === 'virtualService'
          ? { code: 'Unavailable', message: 'device busy', terminal: false }
          : undefined,
    }),
    events: new RecordingEvents(),
    logger: log,
    coalesceMs: 10,
    sweepIntervalMs: 0,
  });
  t.after(() => ctl.stop());
  await ctl.start();
  await eventually(() => lines.filter((l) => l.msg === 'device busy').length >= 1, 5000, 'warned');
  // Several retries of the same failure...
  await new Promise((r) => setTimeout(r, 1500));
  const synced = lines.find((l) => l.msg === 'caches synced')!;
  assert.equal(synced.level, 'INFO');
  assert.match(String(synced.time), /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
  assert.equal(synced.services, 1);
  assert.equal(typeof synced.tookMs, 'number');
  const pass = lines.find((l) => l.msg === 'load balancer updated')!;
  assert.equal(pass['creates.pool'], 1);
  assert.equal(pass.failed, 1);
  const warns = lines.filter((l) => l.msg === 'device busy');
  assert.equal(warns.length, 1, '...give one warn, not one per pass');
  assert.deepEqual(
    [warns[0]!.level, warns[0]!.code, warns[0]!.kind],
    ['WARN', 'Unavailable', 'virtualService'],
  );
});

it('a long first sync logs its progress every few seconds (here every 20 ms), then the counts', async () => {
  const lines: Record<string, unknown>[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      for (const l of chunk.toString().split('\n').filter(Boolean))
        lines.push(JSON.parse(l) as Record<string, unknown>);
      done();
    },
  });
  const log = createLogger({ name: 'controller', destination: sink });
  const ac = new AbortController();
  // Every kind lists at once but Pods, whose list takes 150 ms; watches wait until the end.
  const source = (delayMs: number, items: RawObject[]): ListWatchSource => ({
    list: async () => {
      await new Promise((r) => setTimeout(r, delayMs));
      return { items, resourceVersion: '1' };
    },
    watch: (_rv, _on, signal) =>
      new Promise((r) => {
        const end = () => r({});
        signal.addEventListener('abort', end);
        ac.signal.addEventListener('abort', end);
      }),
  });
  const pod = { metadata: { name: 'p', namespace: 'default', resourceVersion: '1' } };
  // Every kind named (the type says so): a kind left to the API server would never sync here.
  const sources: Record<CacheKind, ListWatchSource> = {
    services: source(0, []),
    pods: source(150, [pod]),
    nodes: source(0, []),
    ingresses: source(0, []),
    ingressClasses: source(0, []),
    secrets: source(0, []),
    configMaps: source(0, []),
    namespaces: source(0, []),
    endpointSlices: source(0, []),
    gatewayCrd: source(0, []),
    gatewayClasses: source(0, []),
    gateways: source(0, []),
    listenerSets: source(0, []),
    httpRoutes: source(0, []),
    tcpRoutes: source(0, []),
    udpRoutes: source(0, []),
    tlsRoutes: source(0, []),
    grpcRoutes: source(0, []),
    loadBalancerParameters: source(0, []),
    referenceGrants: source(0, []),
    backendTlsPolicies: source(0, []),
    backendPolicies: source(0, []),
  };
  const cache = new ClusterCache(new KubeConfig(), log, sources);
  try {
    await cache.start(20);
  } finally {
    ac.abort();
    await cache.stop();
  }
  const progress = lines.filter((l) => l.msg === 'waiting for caches to sync');
  assert.ok(progress.length >= 3, `${progress.length} progress lines`);
  assert.equal(progress[0]!.pods, 0, 'the Pods are not listed yet');
  const synced = lines.find((l) => l.msg === 'caches synced')!;
  assert.equal(synced.pods, 1);
  // The Pods' list took 150 ms by a timer; libuv arms timers from the loop's cached clock, so one
  // can fire a few ms early by any other clock (CI saw 149): the point is the slow list is counted.
  assert.ok(Number(synced.tookMs) >= 120, `tookMs ${String(synced.tookMs)}`);
});
