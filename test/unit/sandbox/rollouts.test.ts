/**
 * Issue 47, item 4: the sandbox rolls Deployments as kube-controller-manager does. The pacing
 * alone (rollout.ts): maxSurge/maxUnavailable as numbers and percentages, unhealthy old Pods first,
 * Recreate. Through the sandbox (`--workloads`): a Pod's Ready waits for its readiness gate; a
 * rolling update with maxSurge 1 / maxUnavailable 0 adds one new Pod and removes no old one until
 * that Pod is Ready (its gate True); a removed Pod stays terminating for its preStop sleep, then
 * goes; a delete with gracePeriodSeconds 0 removes at once; Pods the sandbox does not run are
 * deleted at once, as before.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Writable } from 'node:stream';
import { createLogger } from '../../../src/runtime/logger.ts';
import { rolloutStep, scaledValue, type RolloutSet } from '../../../src/sandbox/rollout.ts';
import { kubeletReady, preStopSeconds } from '../../../src/sandbox/kubelet.ts';
import { api, eventually, useSandbox } from '../../support/sandbox.ts';

type Obj = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
const GATE = 'npl-lb.io/load-balancer-ready';

const set = (name: string, replicas: number, available: number, created: string): RolloutSet => ({
  name,
  replicas,
  available,
  pods: replicas,
  created,
});
const dep = (replicas: number, strategy: Obj = {}) => ({ spec: { replicas, strategy } });

describe('rollout pacing (pure)', () => {
  it('int-or-percent as the API server rounds it', () => {
    assert.equal(scaledValue('25%', 3, '25%', true), 1);
    assert.equal(scaledValue('25%', 3, '25%', false), 0);
    assert.equal(scaledValue(2, 3, '25%', true), 2);
    assert.equal(scaledValue(undefined, 10, '25%', false), 2);
    assert.equal(scaledValue('garbage', 10, '25%', false), 0, 'not a number: none');
  });

  it('maxSurge 1, maxUnavailable 0: one new Pod at a time, an old one goes only once a new one is available', () => {
    const d = dep(3, { type: 'RollingUpdate', rollingUpdate: { maxSurge: 1, maxUnavailable: 0 } });
    const fresh = set('new', 0, 0, 'b');
    const old = set('old', 3, 3, 'a');
    assert.deepEqual([...rolloutStep(d, fresh, [old]).scales], [['new', 1]]);
    // Not available yet: nothing more.
    assert.deepEqual([...rolloutStep(d, set('new', 1, 0, 'b'), [set('old', 3, 3, 'a')]).scales], []);
    // Available: one old one goes (and no more surge until it has).
    assert.deepEqual(
      [...rolloutStep(d, set('new', 1, 1, 'b'), [set('old', 3, 3, 'a')]).scales],
      [['old', 2]],
    );
    assert.deepEqual(
      [...rolloutStep(d, set('new', 1, 1, 'b'), [set('old', 2, 2, 'a')]).scales],
      [['new', 2]],
    );
  });

  it('unhealthy old Pods go first (one, the unavailability allowed); Recreate waits for the old Pods', () => {
    const d = dep(3, { rollingUpdate: { maxSurge: 0, maxUnavailable: 1 } });
    assert.deepEqual(
      [...rolloutStep(d, set('new', 0, 0, 'b'), [set('old', 3, 1, 'a')]).scales],
      [['old', 2]],
    );
    const r = dep(2, { type: 'Recreate' });
    const old = { ...set('old', 2, 2, 'a') };
    assert.deepEqual([...rolloutStep(r, set('new', 0, 0, 'b'), [old]).scales], [['old', 0]]);
    assert.deepEqual(
      [...rolloutStep(r, set('new', 0, 0, 'b'), [{ ...set('old', 0, 0, 'a'), pods: 0 }]).scales],
      [['new', 2]],
    );
  });

  it('Ready as the kubelet says; preStop sleeps as written', () => {
    const pod = (conds: Obj[]) => ({
      spec: { readinessGates: [{ conditionType: GATE }] },
      status: { conditions: conds },
    });
    assert.equal(
      kubeletReady(pod([{ type: 'ContainersReady', status: 'True' }])).reason,
      'ReadinessGatesNotReady',
    );
    assert.equal(
      kubeletReady(
        pod([
          { type: 'ContainersReady', status: 'True' },
          { type: GATE, status: 'True' },
        ]),
      ).status,
      'True',
    );
    assert.equal(kubeletReady(pod([{ type: GATE, status: 'True' }])).status, 'False', 'containers first');
    const c = (preStop: Obj) => ({ spec: { containers: [{ name: 'a', lifecycle: { preStop } }] } });
    assert.equal(preStopSeconds(c({ sleep: { seconds: 5 } })), 5);
    assert.equal(preStopSeconds(c({ exec: { command: ['sleep', '3'] } })), 3);
    assert.equal(preStopSeconds(c({ exec: { command: ['/bin/sh', '-c', 'sleep 2 && kill 1'] } })), 2);
    assert.equal(preStopSeconds(c({ exec: { command: ['/bin/true'] } })), 0);
    assert.equal(preStopSeconds({ spec: {} }), 0, 'no containers: instant');
  });
});

const APPS = '/apis/apps/v1/namespaces/default';
const PODS = '/api/v1/namespaces/default/pods';
const deployment = (image: string) => ({
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name: 'web' },
  spec: {
    replicas: 3,
    strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: 1, maxUnavailable: 0 } },
    selector: { matchLabels: { app: 'web' } },
    template: {
      metadata: { labels: { app: 'web' } },
      spec: {
        readinessGates: [{ conditionType: GATE }],
        terminationGracePeriodSeconds: 30,
        containers: [{ name: 'web', image, lifecycle: { preStop: { sleep: { seconds: 1 } } } }],
      },
    },
  },
});
const cond = (o: Obj, type: string): Obj | undefined =>
  (o.status?.conditions as Obj[] | undefined)?.find((c) => c.type === type);

/** A Ready Node n1 for the sandbox's workload controller to bind Pods to. */
async function readyNode(url: string): Promise<void> {
  assert.equal((await api(url, 'POST', '/api/v1/nodes', { metadata: { name: 'n1' } })).status, 201);
  const r = await api(
    url,
    'PATCH',
    '/api/v1/nodes/n1/status',
    {
      status: {
        addresses: [{ type: 'InternalIP', address: '127.0.0.11' }],
        conditions: [{ type: 'Ready', status: 'True' }],
      },
    },
    { 'Content-Type': 'application/merge-patch+json' },
  );
  assert.equal(r.status, 200);
}

const SMP = { 'Content-Type': 'application/strategic-merge-patch+json' };

/** Opens a Pod's readiness gate: its condition alone, merged by type (the kubelet's stay). */
async function openGate(url: string, pod: Obj): Promise<Obj> {
  const r = await api(
    url,
    'PATCH',
    `${PODS}/${pod.metadata.name}/status`,
    { status: { conditions: [{ type: GATE, status: 'True', reason: 'MemberReady' }] } },
    SMP,
  );
  assert.equal(r.status, 200);
  return r.body as Obj;
}

/** A new template for the Deployment web: its container's image. */
async function setImage(url: string, image: string): Promise<void> {
  const r = await api(
    url,
    'PATCH',
    `${APPS}/deployments/web`,
    { spec: { template: { spec: { containers: [{ name: 'web', image }] } } } },
    SMP,
  );
  assert.equal(r.status, 200);
}

describe('the sandbox rolls a gated Deployment', () => {
  it('Ready waits for the gate; the rollout waits for Ready; removed Pods stop after their preStop', async (t) => {
    const { url } = await useSandbox(t, { workloads: true });
    await readyNode(url);
    const pods = async (): Promise<Obj[]> => ((await api(url, 'GET', PODS)).body.items as Obj[]) ?? [];
    const open = async (p: Obj) => {
      const opened = await openGate(url, p);
      assert.equal(cond(opened, 'ContainersReady')?.status, 'True', 'the kubelet’s conditions kept');
    };
    assert.equal((await api(url, 'POST', `${APPS}/deployments`, deployment('web:1'))).status, 201);
    await eventually(async () => (await pods()).length === 3, 5000, 'three Pods');
    for (const p of await pods()) {
      assert.equal(cond(p, 'Ready')?.status, 'False', 'Ready waits for the gate');
      assert.equal(cond(p, 'Ready')?.reason, 'ReadinessGatesNotReady');
    }
    for (const p of await pods()) await open(p);
    await eventually(
      async () => (await pods()).every((p) => cond(p, 'Ready')?.status === 'True'),
      5000,
      'Ready',
    );

    // A new template: one surge Pod, and no old Pod goes while it is not Ready.
    await setImage(url, 'web:2');
    const image = (p: Obj) => String(p.spec.containers[0].image);
    await eventually(async () => (await pods()).some((p) => image(p) === 'web:2'), 5000, 'a new Pod');
    await new Promise((res) => setTimeout(res, 500));
    let now = await pods();
    assert.equal(now.filter((p) => image(p) === 'web:2').length, 1, 'one surge Pod');
    assert.equal(
      now.filter((p) => image(p) === 'web:1' && !p.metadata.deletionTimestamp).length,
      3,
      'no old one goes yet',
    );

    // Its gate opens: one old Pod terminates (stays for its 1 s preStop), a second new one comes.
    await open(now.find((p) => image(p) === 'web:2')!);
    await eventually(
      async () => (await pods()).some((p) => p.metadata.deletionTimestamp),
      5000,
      'an old Pod terminating',
    );
    const leaving = (await pods()).find((p) => p.metadata.deletionTimestamp)!;
    assert.equal(image(leaving), 'web:1');
    assert.equal(leaving.metadata.deletionGracePeriodSeconds, 30);
    const t0 = Date.now();
    await eventually(
      async () => !(await pods()).some((p) => p.metadata.name === leaving.metadata.name),
      5000,
      'gone after its preStop',
    );
    assert.ok(Date.now() - t0 >= 500, 'it stayed for its preStop');

    // The rest of the rollout, gate by gate.
    await eventually(
      async () => {
        for (const p of await pods())
          if (image(p) === 'web:2' && cond(p, GATE)?.status !== 'True') await open(p);
        now = await pods();
        return (
          now.length === 3 && now.every((p) => image(p) === 'web:2' && cond(p, 'Ready')?.status === 'True')
        );
      },
      20_000,
      'rolled out',
    );
    const d = (await api(url, 'GET', `${APPS}/deployments/web`)).body as Obj;
    assert.equal(d.status.updatedReplicas, 3);
    assert.equal(d.status.availableReplicas, 3);

    // A forced delete goes at once.
    const victim = now[0]!;
    const del = await api(url, 'DELETE', `${PODS}/${victim.metadata.name}?gracePeriodSeconds=0`);
    assert.equal(del.status, 200);
    assert.ok(!(await pods()).some((p) => p.metadata.name === victim.metadata.name));
  });

  it('a rollout held by a gate past progressDeadlineSeconds is ProgressDeadlineExceeded; progress resumes it', async (t) => {
    const { url } = await useSandbox(t, { workloads: true });
    await readyNode(url);
    const d = {
      ...deployment('web:1'),
      spec: { ...deployment('web:1').spec, replicas: 1, progressDeadlineSeconds: 1 },
    };
    assert.equal((await api(url, 'POST', `${APPS}/deployments`, d)).status, 201);
    const progressing = async () =>
      cond((await api(url, 'GET', `${APPS}/deployments/web`)).body as Obj, 'Progressing');
    await eventually(
      async () => {
        const p = await progressing();
        return p?.reason === 'ProgressDeadlineExceeded';
      },
      10_000,
      'deadline exceeded',
    );
    assert.equal((await progressing())?.status, 'False');
    assert.match(String((await progressing())?.message), /has timed out progressing/);
    await new Promise((r) => setTimeout(r, 2500));
    assert.equal(
      (await progressing())?.reason,
      'ProgressDeadlineExceeded',
      'it stays so while nothing moves',
    );
    // The gate opens: the rollout completes.
    const pod = ((await api(url, 'GET', PODS)).body.items as Obj[])[0]!;
    await openGate(url, pod);
    await eventually(
      async () => (await progressing())?.reason === 'NewReplicaSetAvailable',
      5000,
      'complete',
    );
    assert.equal((await progressing())?.status, 'True');
  });

  it('a change-cause annotated mid-rollout (its ReplicaSet rewritten) scales no new Pod away and fails no step', async (t) => {
    // The pass that copies the annotation to the new ReplicaSet once kept the copy it had read
    // among the "old" ones: the new ReplicaSet was scaled down as an old one (its held surge Pod
    // deleted) and the stale copy's write was a conflict that backed the Deployment off.
    const logs: string[] = [];
    const destination = new Writable({
      write(chunk: Buffer, _enc, done) {
        logs.push(chunk.toString());
        done();
      },
    });
    const { url } = await useSandbox(t, {
      workloads: true,
      logger: createLogger({ name: 'sandbox', level: 'warn', destination }),
    });
    await readyNode(url);
    const pods = async (): Promise<Obj[]> => ((await api(url, 'GET', PODS)).body.items as Obj[]) ?? [];
    const d = { ...deployment('web:1'), spec: { ...deployment('web:1').spec, replicas: 1 } };
    assert.equal((await api(url, 'POST', `${APPS}/deployments`, d)).status, 201);
    await eventually(async () => (await pods()).length === 1, 5000, 'one Pod');
    const first = (await pods())[0]!;
    await openGate(url, first);
    const merge = { 'Content-Type': 'application/merge-patch+json' };
    await setImage(url, 'web:2');
    const image = (p: Obj) => String(p.spec.containers[0].image);
    await eventually(async () => (await pods()).some((p) => image(p) === 'web:2'), 5000, 'the surge Pod');
    const surge = (await pods()).find((p) => image(p) === 'web:2')!;
    // Held by its gate; now the change-cause arrives (as `kubectl annotate` after `set image`).
    const annotate = await api(
      url,
      'PATCH',
      `${APPS}/deployments/web`,
      { metadata: { annotations: { 'kubernetes.io/change-cause': 'image 2' } } },
      merge,
    );
    assert.equal(annotate.status, 200);
    const sets = async () =>
      ((await api(url, 'GET', `${APPS}/replicasets`)).body.items as Obj[]).find(
        (rs) => rs.spec.template.spec.containers[0].image === 'web:2',
      )!;
    await eventually(
      async () => (await sets()).metadata.annotations['kubernetes.io/change-cause'] === 'image 2',
      5000,
      'copied to the new ReplicaSet',
    );
    await new Promise((r) => setTimeout(r, 300));
    const now = (await pods()).filter((p) => image(p) === 'web:2');
    assert.deepEqual(
      now.map((p) => [p.metadata.uid, Boolean(p.metadata.deletionTimestamp)]),
      [[surge.metadata.uid, false]],
      'the held surge Pod stays, none deleted, none made again',
    );
    assert.equal((await sets()).spec.replicas, 1);
    assert.deepEqual(
      logs.filter((l) => /failed/.test(l)),
      [],
      'no step failed',
    );
  });

  it('a Pod the sandbox does not run is deleted at once', async (t) => {
    const { url } = await useSandbox(t, { workloads: true });
    const made = await api(url, 'POST', PODS, {
      metadata: { name: 'bare' },
      spec: { nodeName: 'n1', containers: [{ name: 'a', image: 'x' }] },
    });
    assert.equal(made.status, 201);
    assert.equal((await api(url, 'DELETE', `${PODS}/bare`)).status, 200);
    assert.equal((await api(url, 'GET', `${PODS}/bare`)).status, 404);
  });
});
