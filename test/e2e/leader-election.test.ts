/**
 * Leader election on a Lease in the sandbox: one leader of two, handover on release, failover
 * within the lease duration when the leader stops renewing, and a leader that loses the lease
 * stops leading.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { CoordinationV1Api, type KubeConfig, V1MicroTime } from '@kubernetes/client-node';
import { LeaderElector } from '../../src/runtime/leader-election.ts';
import { eventually, useSandbox } from '../support/sandbox.ts';

function elector(kc: KubeConfig, identity: string, log: string[]) {
  return new LeaderElector({
    kubeConfig: kc,
    namespace: 'kube-system',
    name: 'npl-lb-controller',
    identity,
    leaseDurationMs: 1000,
    renewDeadlineMs: 600,
    retryPeriodMs: 100,
    onStartedLeading: () => {
      log.push(`${identity} leads`);
    },
    onStoppedLeading: () => {
      log.push(`${identity} lost`);
    },
  });
}

describe('leader election', () => {
  it('one leader of two; a released lease is taken over at once', async (t) => {
    const { kc } = await useSandbox(t);
    const log: string[] = [];
    const a = elector(kc, 'a', log);
    const b = elector(kc, 'b', log);
    t.after(async () => {
      await a.stop();
      await b.stop();
    });
    a.start();
    await eventually(() => a.isLeader, 3000, 'a leads');
    b.start();
    await new Promise((r) => setTimeout(r, 400));
    assert.equal(b.isLeader, false, 'only one leader');
    const started = Date.now();
    await a.stop();
    await eventually(() => b.isLeader, 3000, 'b takes over');
    assert.ok(Date.now() - started < 1500, 'handover well within the lease duration');
    const lease = await kc
      .makeApiClient(CoordinationV1Api)
      .readNamespacedLease({ name: 'npl-lb-controller', namespace: 'kube-system' });
    assert.equal(lease.spec?.holderIdentity, 'b');
    assert.equal(lease.spec?.leaseTransitions, 1);
    assert.deepEqual(log, ['a leads', 'b leads']);
  });

  it('fails over when the leader stops renewing, and a leader whose lease is taken stops leading', async (t) => {
    const { kc } = await useSandbox(t);
    const log: string[] = [];
    const a = elector(kc, 'a', log);
    t.after(() => a.stop());
    a.start();
    await eventually(() => a.isLeader, 3000, 'a leads');
    // Someone else takes the lease by force: a must notice it cannot renew and step down.
    const api = kc.makeApiClient(CoordinationV1Api);
    const lease = await api.readNamespacedLease({ name: 'npl-lb-controller', namespace: 'kube-system' });
    lease.spec = {
      ...lease.spec,
      holderIdentity: 'intruder',
      renewTime: new V1MicroTime(Date.now() + 60_000),
      acquireTime: new V1MicroTime(),
    };
    await api.replaceNamespacedLease({ name: 'npl-lb-controller', namespace: 'kube-system', body: lease });
    await eventually(() => log.includes('a lost'), 3000, 'a steps down');
    assert.equal(a.isLeader, false);
    // The intruder never renews; a standby takes over once its lease has expired.
    const fresh = await api.readNamespacedLease({ name: 'npl-lb-controller', namespace: 'kube-system' });
    fresh.spec = {
      ...fresh.spec,
      holderIdentity: 'intruder',
      renewTime: new V1MicroTime(Date.now()),
      acquireTime: new V1MicroTime(),
    };
    await api.replaceNamespacedLease({ name: 'npl-lb-controller', namespace: 'kube-system', body: fresh });
    const b = elector(kc, 'b', log);
    t.after(() => b.stop());
    const started = Date.now();
    b.start();
    await eventually(() => b.isLeader, 4000, 'b takes over after expiry');
    const waited = Date.now() - started;
    assert.ok(waited >= 500 && waited < 2500, `took over after ${waited} ms (lease 1000 ms)`);
  });
});
