/**
 * The Event recorder's dedupe (src/kube/events.ts): the same Event for the same object is written
 * once per interval; what can no longer suppress anything is forgotten, the oldest first, as each
 * Event is written (never a walk of every key remembered); an Event written again after its
 * interval is remembered from then; a server that refuses an Event is logged, never thrown.
 * Against a small API server on loopback that counts what it is sent.
 */
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { describe, it, type TestContext } from 'node:test';
import { KubeConfig } from '@kubernetes/client-node';
import { EventRecorder, type EventTarget } from '../../../src/kube/events.ts';
import { renderKubeconfig } from '../../../src/sandbox/kubeconfig.ts';

/** An API server taking Events (201), or refusing them (500) while `refuse` is set. */
async function apiServer(t: TestContext) {
  const seen: { reason: string; namespace: string }[] = [];
  const state = { refuse: false };
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (d: Buffer) => (body += d.toString()));
    req.on('end', () => {
      if (state.refuse) return void res.writeHead(500).end('{}');
      const e = JSON.parse(body) as { reason: string; metadata: { namespace: string } };
      seen.push({ reason: e.reason, namespace: e.metadata.namespace });
      res.writeHead(201, { 'content-type': 'application/json' }).end(body);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  t.after(() => new Promise<void>((r) => server.close(() => r())));
  const { port } = server.address() as { port: number };
  const kc = new KubeConfig();
  kc.loadFromString(renderKubeconfig({ server: `http://127.0.0.1:${port}` }));
  return { kc, seen, state };
}

const svc = (name: string): EventTarget => ({
  kind: 'Service',
  apiVersion: 'v1',
  namespace: 'default',
  name,
  uid: `uid-${name}`,
});

describe('Event recorder', () => {
  it('writes an Event once per interval and forgets, the oldest first, what can no longer suppress one', async (t) => {
    const { kc, seen } = await apiServer(t);
    let now = 1_000_000;
    const r = new EventRecorder(kc, 'npl-lb-controller', 'host', { dedupeMs: 1000, now: () => now });
    await r.record(svc('a'), 'Normal', 'UpdatedLoadBalancer', 'updated');
    await r.record(svc('a'), 'Normal', 'UpdatedLoadBalancer', 'updated');
    assert.equal(seen.length, 1, 'the same Event within its interval: written once');
    now += 1;
    await r.record(svc('b'), 'Normal', 'UpdatedLoadBalancer', 'updated');
    assert.equal(r.remembered, 2);

    // a's interval is over: written again, and remembered from now (after b).
    now += 1000;
    await r.record(svc('a'), 'Normal', 'UpdatedLoadBalancer', 'updated');
    assert.equal(seen.length, 3);
    // b's is over too: forgotten as the next Event is written; a, written again later, is kept.
    now += 1;
    await r.record(svc('c'), 'Normal', 'UpdatedLoadBalancer', 'updated');
    assert.equal(r.remembered, 2, 'b forgotten, a and c kept');
    await r.record(svc('a'), 'Normal', 'UpdatedLoadBalancer', 'updated');
    assert.equal(seen.length, 4, 'a still suppressed within its new interval');
  });

  it('a thousand objects and more: each Event forgets only what has expired, and the interval still holds', async (t) => {
    const { kc, seen } = await apiServer(t);
    let now = 0;
    const r = new EventRecorder(kc, 'npl-lb-controller', 'host', { dedupeMs: 10_000, now: () => now });
    for (let i = 0; i < 1500; i++, now += 1)
      await r.record(svc(`s${i}`), 'Normal', 'EnsuredLoadBalancer', 'live');
    assert.equal(r.remembered, 1500, 'all within the interval: all remembered');
    await r.record(svc('s0'), 'Normal', 'EnsuredLoadBalancer', 'live');
    assert.equal(seen.length, 1500, 'the first one still suppressed');
    // Half the interval later for the first 750: they expire and go as the next Event is written.
    now = 10_000 + 749;
    await r.record(svc('new'), 'Normal', 'EnsuredLoadBalancer', 'live');
    assert.equal(r.remembered, 1500 - 750 + 1);
  });

  it('an Event the API server refuses is logged, never thrown', async (t) => {
    const { kc, state } = await apiServer(t);
    state.refuse = true;
    const r = new EventRecorder(kc, 'npl-lb-controller', 'host');
    await r.record(svc('a'), 'Warning', 'SyncLoadBalancerFailed', 'refused');
  });
});
