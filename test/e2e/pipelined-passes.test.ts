/**
 * LB passes overlap: while a slow device call for one pool is in flight, a change to another pool
 * is applied without waiting for it, and a second change to the held pool waits for its first (two
 * writes to one object never race). Counted, not timed: the device holds a call until the test
 * releases it.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { MemoryAdapter } from '../../adapters/memory/adapter.ts';
import type { ApplyResult } from '../../src/adapter/contract.ts';
import { parseControllerConfig } from '../../src/config/controller-config.ts';
import { NplController } from '../../src/controller/controller.ts';
import { NPL_POD_ANNOTATION } from '../../src/kube/annotations.ts';
import type { Change } from '../../src/plan/diff.ts';
import { Cluster } from '../support/cluster.ts';
import { eventually, useSandbox } from '../support/sandbox.ts';

const NODE_IP = '192.0.2.1';

describe('pipelined LB passes', () => {
  it('a change never waits behind an unrelated device call; one object is never written twice at once', async (t) => {
    const { kc } = await useSandbox(t);
    const c = new Cluster(kc);
    await c.node('n1', { internal: [NODE_IP] });
    const adapter = new MemoryAdapter({ owner: 'c1' });
    const inner = adapter.apply.bind(adapter);
    let hold: Promise<void> | undefined;
    let release: () => void = () => {};
    const inFlight = new Map<string, number>();
    let maxSameObject = 0;
    let maxCalls = 0;
    let calls = 0;
    const log: string[] = [];
    adapter.apply = async (changes: Change[]): Promise<ApplyResult[]> => {
      calls++;
      maxCalls = Math.max(maxCalls, calls);
      for (const ch of changes) {
        const n = (inFlight.get(ch.name) ?? 0) + 1;
        inFlight.set(ch.name, n);
        maxSameObject = Math.max(maxSameObject, n);
      }
      try {
        if (hold && changes.some((ch) => ch.name === 'c1--default-a-http')) await hold;
        const r = await inner(changes);
        for (const ch of changes) {
          if (ch.kind === 'pool' && ch.op !== 'delete')
            log.push(`${ch.name} ${ch.desired.members.map((m) => m.port).join(',')}`);
        }
        return r;
      } finally {
        calls--;
        for (const ch of changes) inFlight.set(ch.name, inFlight.get(ch.name)! - 1);
      }
    };
    const ctl = new NplController({
      kubeConfig: kc,
      config: parseControllerConfig(
        'clusterName: c1\ndefaultLoadBalancer: true\nvip: {cidrs: [192.0.2.64/26]}',
      ),
      adapter,
      events: { record: async () => {} },
      coalesceMs: 5,
      sweepIntervalMs: 0,
    });
    t.after(async () => {
      release();
      await ctl.stop();
    });
    await ctl.start();
    const annotate = (name: string, nodePort: number) =>
      c.patchPodStatus(name, {
        metadata: {
          annotations: {
            [NPL_POD_ANNOTATION]: JSON.stringify([
              { podPort: 8080, nodeIP: NODE_IP, nodePort, protocol: 'tcp', ipFamily: 'IPv4' },
            ]),
          },
        },
        status: { conditions: [{ type: 'Ready', status: 'True' }] },
      });
    for (const svc of ['a', 'b']) {
      await c.service(svc, {
        type: 'LoadBalancer',
        selector: { app: svc },
        ports: [{ name: 'http', port: 80, targetPort: 8080 }],
      });
      await c.pod(`${svc}-1`, {
        node: 'n1',
        labels: { app: svc },
        ips: ['10.244.0.1'],
        ports: [{ containerPort: 8080 }],
      });
    }
    await annotate('a-1', 61000);
    await annotate('b-1', 61001);
    const port = (pool: string) => adapter.device.pools.get(pool)?.pool.members[0]?.port;
    await eventually(
      () => port('c1--default-a-http') === 61000 && port('c1--default-b-http') === 61001,
      10_000,
      'synced',
    );
    await ctl.settled();

    // Pool a's next write is held by the device.
    hold = new Promise<void>((r) => (release = r));
    await annotate('a-1', 62000);
    await eventually(() => inFlight.get('c1--default-a-http') === 1, 5000, "a's write in flight");
    // b changes meanwhile: applied while a's call is still in flight.
    await annotate('b-1', 62001);
    await eventually(() => port('c1--default-b-http') === 62001, 5000, 'b applied past the held call');
    assert.equal(inFlight.get('c1--default-a-http'), 1, "a's call is still held");
    assert.equal(port('c1--default-a-http'), 61000);
    // a changes again: its write waits for the held one, and is not lost.
    await annotate('a-1', 63000);
    await new Promise((r) => setTimeout(r, 200));
    assert.equal(maxSameObject, 1, 'never two writes of one object at once');
    release();
    hold = undefined;
    await eventually(
      () => port('c1--default-a-http') === 63000,
      5000,
      "a's latest change applied after the held one",
    );
    assert.ok(maxCalls >= 2, `device calls overlapped (${maxCalls} at most at once)`);
    assert.equal(maxSameObject, 1);
    assert.deepEqual(
      log.filter((l) => l.startsWith('c1--default-a-http')).slice(-3),
      ['c1--default-a-http 61000', 'c1--default-a-http 62000', 'c1--default-a-http 63000'],
      "a's writes in the order of its changes",
    );
  });
});
