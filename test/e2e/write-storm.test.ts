/**
 * Fast recovery: the load balancer fails every write for 30 s while Pods churn; once it answers
 * again the controller converges within 5 s, with nothing missing or stale. The retry backoff is
 * capped (2 s), so a long outage does not leave the controller asleep for 30 s after it.
 */
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { MemoryAdapter } from '../../adapters/memory/adapter.ts';
import { MemoryLoadBalancer } from '../../adapters/memory/device.ts';
import type { ApplyError } from '../../src/adapter/contract.ts';
import { parseControllerConfig } from '../../src/config/controller-config.ts';
import { NplController } from '../../src/controller/controller.ts';
import { NPL_POD_ANNOTATION } from '../../src/kube/annotations.ts';
import { Cluster, RecordingEvents } from '../support/cluster.ts';
import { eventually, useSandbox } from '../support/sandbox.ts';

const OUTAGE_MS = 30_000;
const PODS = 12;

it('after 30 s of failed writes while Pods churn, the controller converges within 5 s of recovery', async (t) => {
  const { kc } = await useSandbox(t);
  const c = new Cluster(kc);
  await c.node('n1', { internal: ['192.0.2.201'] });
  await c.service('web', {
    type: 'LoadBalancer',
    enabled: null,
    ports: [{ name: 'http', port: 80, targetPort: 'http' }],
  });
  const ready = new Map<string, boolean>();
  const setPod = async (i: number, isReady: boolean) => {
    ready.set(`web-${i}`, isReady);
    await c.patchPodStatus(`web-${i}`, {
      metadata: {
        annotations: {
          [NPL_POD_ANNOTATION]: JSON.stringify([
            { podPort: 8080, nodeIP: '192.0.2.201', nodePort: 61000 + i, protocol: 'tcp', ipFamily: 'IPv4' },
          ]),
        },
      },
      status: { phase: 'Running', conditions: [{ type: 'Ready', status: isReady ? 'True' : 'False' }] },
    });
  };
  for (let i = 0; i < 4; i++) {
    await c.pod(`web-${i}`, { node: 'n1', ports: [{ name: 'http', containerPort: 8080 }] });
    await setPod(i, true);
  }
  const device = new MemoryLoadBalancer();
  let down = false;
  let refused = 0;
  const fault = (): ApplyError | undefined => {
    if (!down) return undefined;
    refused++;
    return { code: 'Unavailable', message: 'device answers 503', terminal: false };
  };
  const ctl = new NplController({
    kubeConfig: kc,
    config: parseControllerConfig(
      'clusterName: c1\ndefaultLoadBalancer: true\nvip: {cidrs: [192.0.2.0/24]}\n',
    ),
    adapter: new MemoryAdapter({ owner: 'c1', device, fault }),
    events: new RecordingEvents(),
    coalesceMs: 10,
    sweepIntervalMs: 0,
  });
  t.after(() => ctl.stop());
  await ctl.start();
  const pool = 'c1--default-web-http';
  const onDevice = () =>
    (device.pools.get(pool)?.pool.members ?? [])
      .map((m) => `${m.pod}${m.enabled ? '' : ' draining'}`)
      .sort()
      .join(',');
  const wanted = () =>
    [...ready]
      .map(([name, r]) => `default/${name}${r ? '' : ' draining'}`)
      .sort()
      .join(',');
  await eventually(() => onDevice() === wanted(), 5000, 'first sync');

  // The outage: every write fails for 30 s; Pods come, go ready and unready meanwhile (bounded).
  down = true;
  const until = Date.now() + OUTAGE_MS;
  let next = 4;
  for (let step = 0; Date.now() < until && step < 400; step++) {
    if (step % 5 === 0 && next < PODS) {
      await c.pod(`web-${next}`, { node: 'n1', ports: [{ name: 'http', containerPort: 8080 }] });
      await setPod(next, true);
      next++;
    } else {
      const i = step % next;
      await setPod(i, !ready.get(`web-${i}`));
    }
    await new Promise((r) => setTimeout(r, Math.min(250, Math.max(0, until - Date.now()))));
  }
  assert.ok(refused > 10, `writes were tried and refused during the outage (${refused})`);
  assert.notEqual(onDevice(), wanted(), 'the device is behind after the outage');
  down = false;
  const recovered = Date.now();
  await eventually(() => onDevice() === wanted(), 10_000, 'converged after recovery');
  const took = Date.now() - recovered;
  t.diagnostic(`converged ${took} ms after recovery; ${refused} writes refused during the outage`);
  assert.ok(took <= 5000, `converged ${took} ms after recovery`);
  // Nothing stale: exactly the Pods there are, in their last state; the virtual service is there.
  assert.equal(device.pools.get(pool)!.pool.members.length, next);
  assert.ok(device.virtualServices.has('c1--default-web-TCP-80'));
});
