/**
 * Sandbox benchmark: 10,000 Pods and 1,000 Services, 10 concurrent watchers.
 * Measures full-list latency, watch delivery latency (p50/p99) and the sandbox's RSS.
 * The sandbox runs as its own process (`npl-lb sandbox`), the load from this one; loopback only.
 * Bounded: fixed counts, and the whole run aborts after 10 minutes.
 *
 *   npm run bench:sandbox [-- --pods 10000 --services 1000 --watchers 10 --updates 2000]
 */
import { readFileSync } from 'node:fs';
import { request } from 'node:http';
import { cpus } from 'node:os';
import { parseArgs } from 'node:util';
import { fetch } from 'undici';
import { dispatcher, pool, quantile, send, printTable } from '../http-load.ts';
import { startSandboxProcess } from '../sandbox-process.ts';

const { values } = parseArgs({
  options: {
    pods: { type: 'string', default: '10000' },
    services: { type: 'string', default: '1000' },
    watchers: { type: 'string', default: '10' },
    updates: { type: 'string', default: '2000' },
    lists: { type: 'string', default: '20' },
  },
});
const PODS = Number(values.pods);
const SERVICES = Number(values.services);
const WATCHERS = Number(values.watchers);
const UPDATES = Number(values.updates);
const LISTS = Number(values.lists);
const deadline = setTimeout(() => {
  console.error('benchmark exceeded 10 minutes; aborting');
  process.exit(1);
}, 600_000);

const ms = (n: number) => `${n.toFixed(1)} ms`;

/** Peak resident set (VmHWM) and anonymous memory now (RssAnon, the heap), in MiB. */
function memoryMiB(pid: number): { hwm: number; anon: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (field: string) => Number(new RegExp(`${field}:\\s+(\\d+)`).exec(status)?.[1] ?? 0) / 1024;
  return { hwm: kb('VmHWM'), anon: kb('RssAnon') };
}

function pod(i: number) {
  return {
    metadata: {
      name: `web-${i}`,
      namespace: `ns-${i % 10}`,
      labels: { app: `app-${i % SERVICES}`, tier: 'web' },
      annotations: { 'example.com/owner': 'bench' },
    },
    spec: {
      nodeName: `node-${i % 100}`,
      containers: [
        {
          name: 'web',
          image: 'nginx:1.27',
          ports: [
            { name: 'http', containerPort: 8080 },
            { name: 'metrics', containerPort: 9090 },
          ],
          resources: { requests: { cpu: '100m', memory: '64Mi' } },
        },
      ],
    },
  };
}

interface Watcher {
  arrivals: Map<string, number>;
  close(): void;
}

function watch(url: string, rv: string): Promise<Watcher> {
  return new Promise((resolve, reject) => {
    const arrivals = new Map<string, number>();
    let buf = '';
    const req = request(
      `${url}/api/v1/pods?watch=true&resourceVersion=${rv}&allowWatchBookmarks=true`,
      (res) => {
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          const now = performance.now();
          buf += chunk;
          let i = buf.indexOf('\n');
          while (i >= 0) {
            const line = buf.slice(0, i);
            buf = buf.slice(i + 1);
            const m = /"labels":\{[^}]*"bench-seq":"(\d+)"/.exec(line);
            if (m) arrivals.set(m[1]!, now);
            i = buf.indexOf('\n');
          }
        });
        resolve({ arrivals, close: () => req.destroy() });
      },
    );
    req.on('error', (e) => {
      if (!String((e as NodeJS.ErrnoException).code).includes('RESET')) reject(e);
    });
    req.end();
  });
}

async function main(): Promise<void> {
  console.log(
    `machine: ${cpus().length} cores, ${cpus()[0]?.model ?? 'unknown cpu'}, node ${process.version}`,
  );
  console.log(
    `load: ${PODS} pods in 10 namespaces, ${SERVICES} services, ${WATCHERS} watchers, ${UPDATES} updates`,
  );
  const { child, url } = await startSandboxProcess();
  try {
    const baseMem = memoryMiB(child.pid!);
    for (let n = 0; n < 10; n++)
      await send(url, 'POST', '/api/v1/namespaces', { metadata: { name: `ns-${n}` } });
    let t = performance.now();
    await pool(
      Array.from({ length: PODS }, (_, i) => i),
      16,
      (i) => send(url, 'POST', `/api/v1/namespaces/ns-${i % 10}/pods`, pod(i)),
    );
    const createPodsMs = performance.now() - t;
    t = performance.now();
    await pool(
      Array.from({ length: SERVICES }, (_, i) => i),
      16,
      (i) =>
        send(url, 'POST', `/api/v1/namespaces/ns-${i % 10}/services`, {
          metadata: { name: `svc-${i}`, annotations: { 'nodeportlocal.antrea.io/enabled': 'true' } },
          spec: {
            type: i % 2 ? 'LoadBalancer' : 'ClusterIP',
            selector: { app: `app-${i}` },
            ports: [{ name: 'http', port: 80, targetPort: 'http' }],
          },
        }),
    );
    const createSvcMs = performance.now() - t;

    // Full list of all Pods: time to the last byte, and to a parsed object.
    const listTimes: number[] = [];
    const parseTimes: number[] = [];
    let listBytes = 0;
    for (let i = 0; i < LISTS; i++) {
      const t0 = performance.now();
      const res = await fetch(`${url}/api/v1/pods`, { dispatcher });
      const text = await res.text();
      const t1 = performance.now();
      const parsed = JSON.parse(text) as { items: unknown[] };
      const t2 = performance.now();
      if (parsed.items.length !== PODS) throw new Error(`listed ${parsed.items.length} pods`);
      listTimes.push(t1 - t0);
      parseTimes.push(t2 - t0);
      listBytes = text.length;
    }
    listTimes.sort((a, b) => a - b);
    parseTimes.sort((a, b) => a - b);

    // Watch delivery: 10 watchers on all Pods; each update's latency is from just before its PATCH
    // is sent until a watcher has the event. Updates go one at a time, so latency is not queueing.
    const rv = (
      (await (await fetch(`${url}/api/v1/pods?limit=1`, { dispatcher })).json()) as {
        metadata: { resourceVersion: string };
      }
    ).metadata.resourceVersion;
    const watchers = await Promise.all(Array.from({ length: WATCHERS }, () => watch(url, rv)));
    const sentAt = new Map<string, number>();
    for (let s = 0; s < UPDATES; s++) {
      const i = (s * 7919) % PODS;
      const seq = String(s);
      sentAt.set(seq, performance.now());
      await send(
        url,
        'PATCH',
        `/api/v1/namespaces/ns-${i % 10}/pods/web-${i}`,
        { metadata: { labels: { 'bench-seq': seq } } },
        'application/merge-patch+json',
      );
    }
    const waitUntil = performance.now() + 10_000;
    while (performance.now() < waitUntil && watchers.some((w) => w.arrivals.size < UPDATES)) {
      await new Promise((r) => setTimeout(r, 20));
    }
    const latencies: number[] = [];
    let missing = 0;
    for (const w of watchers) {
      for (const [seq, t0] of sentAt) {
        const at = w.arrivals.get(seq);
        if (at === undefined) missing++;
        else latencies.push(at - t0);
      }
    }
    latencies.sort((a, b) => a - b);
    const mem = memoryMiB(child.pid!);
    for (const w of watchers) w.close();

    const rows: [string, string, string][] = [
      [
        'create 10,000 pods (16 in flight)',
        ms(createPodsMs),
        `${Math.round(PODS / (createPodsMs / 1000))} pods/s`,
      ],
      ['create 1,000 services (16 in flight)', ms(createSvcMs), ''],
      [
        `full list of ${PODS} pods, last byte (median of ${LISTS})`,
        ms(quantile(listTimes, 0.5)),
        `p90 ${ms(quantile(listTimes, 0.9))}, ${(listBytes / 1e6).toFixed(1)} MB`,
      ],
      [
        `full list of ${PODS} pods, parsed (median of ${LISTS})`,
        ms(quantile(parseTimes, 0.5)),
        `p90 ${ms(quantile(parseTimes, 0.9))}`,
      ],
      [
        'watch delivery p50',
        ms(quantile(latencies, 0.5)),
        `${latencies.length} deliveries, ${missing} missing`,
      ],
      [
        'watch delivery p99',
        ms(quantile(latencies, 0.99)),
        `max ${ms(latencies[latencies.length - 1] ?? Number.NaN)}`,
      ],
      [
        'sandbox VmHWM / RssAnon with everything loaded',
        `${mem.hwm.toFixed(0)} / ${mem.anon.toFixed(0)} MiB`,
        `at start ${baseMem.hwm.toFixed(0)} / ${baseMem.anon.toFixed(0)} MiB`,
      ],
    ];
    printTable(rows);
    if (missing > 0) process.exitCode = 1;
  } finally {
    child.kill('SIGTERM');
    clearTimeout(deadline);
    await dispatcher.close();
  }
}

await main();
