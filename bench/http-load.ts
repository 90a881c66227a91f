/**
 * Load helpers shared by the benchmarks: JSON requests to the sandbox over a pooled dispatcher,
 * bounded concurrency, and quantiles.
 */
import { Agent, fetch } from 'undici';
import { NPL_POD_ANNOTATION } from '../src/kube/annotations.ts';

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

/** Prints benchmark rows (measure, value, notes) as a Markdown table, as bench/README.md keeps them. */
export function printTable(rows: [string, string, string][]): void {
  console.log('\n| measure | value | notes |\n| --- | --- | --- |');
  for (const [measure, value, notes] of rows) console.log(`| ${measure} | ${value} | ${notes} |`);
}

/** Ready Nodes `node-0..n-1` with the InternalIP `ipOf(i)`. */
export async function createNodes(url: string, n: number, ipOf: (i: number) => string): Promise<void> {
  for (let i = 0; i < n; i++) {
    await send(url, 'POST', '/api/v1/nodes', {
      metadata: { name: `node-${i}` },
      status: {
        addresses: [{ type: 'InternalIP', address: ipOf(i) }],
        conditions: [{ type: 'Ready', status: 'True' }],
      },
    });
  }
}

/** LoadBalancer Services `svc-i` selecting `app: app-i`, port 80 -> 8080, annotated for NodePortLocal. */
export async function createLbServices(url: string, n: number): Promise<void> {
  await pool(
    Array.from({ length: n }, (_, i) => i),
    16,
    (i) =>
      send(url, 'POST', '/api/v1/namespaces/default/services', {
        metadata: { name: `svc-${i}`, annotations: { 'nodeportlocal.antrea.io/enabled': 'true' } },
        spec: {
          type: 'LoadBalancer',
          selector: { app: `app-${i}` },
          ports: [{ name: 'http', port: 80, targetPort: 8080 }],
        },
      }),
  );
}

/**
 * A Running, Ready Pod `name` labelled `app: <app>` on `node-<n mod nodes>`, carrying the
 * NodePortLocal annotation an agent would write (port 8080 at `nodeIP(n mod nodes):nodePort`).
 */
export async function annotatedPod(
  url: string,
  p: { name: string; app: string; n: number; nodes: number; nodeIP: (i: number) => string; nodePort: number },
): Promise<void> {
  const node = p.n % p.nodes;
  await send(url, 'POST', '/api/v1/namespaces/default/pods', {
    metadata: { name: p.name, labels: { app: p.app } },
    spec: {
      nodeName: `node-${node}`,
      containers: [{ name: 'c', image: 'x', ports: [{ containerPort: 8080 }] }],
    },
  });
  await send(
    url,
    'PATCH',
    `/api/v1/namespaces/default/pods/${p.name}/status`,
    {
      metadata: {
        annotations: {
          [NPL_POD_ANNOTATION]: JSON.stringify([
            {
              podPort: 8080,
              nodeIP: p.nodeIP(node),
              nodePort: p.nodePort,
              protocol: 'tcp',
              ipFamily: 'IPv4',
            },
          ]),
        },
      },
      status: {
        phase: 'Running',
        podIP: `10.244.${p.n >> 8}.${p.n & 255}`,
        conditions: [{ type: 'Ready', status: 'True' }],
      },
    },
    'application/merge-patch+json',
  );
}
