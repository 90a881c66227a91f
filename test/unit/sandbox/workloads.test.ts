/**
 * The sandbox's workload controllers (`--workloads`, on in the demo): Deployments roll out through
 * ReplicaSets, DaemonSets follow the Nodes their selector takes, Pods are bound to Ready Nodes and
 * reported Running (nothing runs: no address, the simulated annotation), statuses are the ones
 * kubectl and Helm's --wait read; no Node means Pending with the reason; a Pod the API refuses is
 * ReplicaFailure on the ReplicaSet and the Deployment and holds no other workload back; what was
 * made goes with its owner; a cluster without the flag runs nothing.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { SIMULATED, templateHash } from '../../../src/sandbox/workload-controller.ts';
import { api, eventually, useSandbox } from '../../support/sandbox.ts';

type Obj = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const APPS = '/apis/apps/v1/namespaces/default';
const template = (image: string, extra: Obj = {}) => ({
  metadata: { labels: { app: 'web' } },
  spec: { containers: [{ name: 'web', image }], ...extra },
});
const deployment = (replicas: number, image = 'web:1') => ({
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name: 'web' },
  spec: { replicas, selector: { matchLabels: { app: 'web' } }, template: template(image) },
});

async function addNode(url: string, name: string, ip: string, labels: Obj = {}, ready = true): Promise<void> {
  assert.equal((await api(url, 'POST', '/api/v1/nodes', { metadata: { name, labels } })).status, 201);
  const status = {
    addresses: [{ type: 'InternalIP', address: ip }],
    conditions: [{ type: 'Ready', status: ready ? 'True' : 'False' }],
  };
  const r = await api(
    url,
    'PATCH',
    `/api/v1/nodes/${name}/status`,
    { status },
    {
      'Content-Type': 'application/merge-patch+json',
    },
  );
  assert.equal(r.status, 200);
}

const list = async (url: string, path: string): Promise<Obj[]> =>
  ((await api(url, 'GET', path)).body.items as Obj[]) ?? [];
const get = async (url: string, path: string): Promise<Obj> => (await api(url, 'GET', path)).body as Obj;
const cond = (o: Obj, type: string): Obj | undefined =>
  (o.status?.conditions as Obj[] | undefined)?.find((c) => c.type === type);

describe('the sandbox runs workloads', () => {
  it('a Deployment with no Node is Pending and unavailable; Nodes make it available; a new template rolls it out', async (t) => {
    const { url } = await useSandbox(t, { workloads: true });
    assert.equal((await api(url, 'POST', `${APPS}/deployments`, deployment(2))).status, 201);
    await eventually(
      async () => (await list(url, '/api/v1/namespaces/default/pods')).length === 2,
      5000,
      'pods made',
    );
    const pending = await list(url, '/api/v1/namespaces/default/pods');
    for (const p of pending) {
      assert.equal(p.status.phase, 'Pending');
      assert.equal(cond(p, 'PodScheduled')?.reason, 'Unschedulable');
      assert.match(String(cond(p, 'PodScheduled')?.message), /^0\/0 nodes are available/);
    }
    let d = await get(url, `${APPS}/deployments/web`);
    assert.equal(cond(d, 'Available')?.status, 'False');

    await addNode(url, 'node-1', '127.0.0.11');
    await addNode(url, 'node-2', '127.0.0.12');
    await eventually(
      async () => cond(await get(url, `${APPS}/deployments/web`), 'Available')?.status === 'True',
      5000,
      'available',
    );
    d = await get(url, `${APPS}/deployments/web`);
    assert.equal(d.status.observedGeneration, d.metadata.generation);
    assert.deepEqual(
      [d.status.replicas, d.status.updatedReplicas, d.status.readyReplicas, d.status.availableReplicas],
      [2, 2, 2, 2],
    );
    assert.equal(cond(d, 'Progressing')?.reason, 'NewReplicaSetAvailable');
    const hash = templateHash(d.spec.template);
    const [rs] = await list(url, `${APPS}/replicasets`);
    assert.equal(rs!.metadata.name, `web-${hash}`);
    assert.equal(rs!.metadata.ownerReferences[0].uid, d.metadata.uid);
    assert.equal(rs!.metadata.annotations['deployment.kubernetes.io/revision'], '1');
    const pods = await list(url, '/api/v1/namespaces/default/pods');
    assert.equal(pods.length, 2);
    for (const p of pods) {
      assert.equal(p.status.phase, 'Running');
      assert.equal(p.metadata.annotations[SIMULATED], 'true');
      assert.equal(p.metadata.labels['pod-template-hash'], hash);
      assert.equal(p.status.podIP, undefined, 'nothing runs: no address');
      assert.equal(p.status.hostIP, p.spec.nodeName === 'node-1' ? '127.0.0.11' : '127.0.0.12');
    }

    // A new image: a second ReplicaSet takes the Pods, the first is scaled to 0.
    const patched = await api(
      url,
      'PATCH',
      `${APPS}/deployments/web`,
      { spec: { template: template('web:2') } },
      {
        'Content-Type': 'application/merge-patch+json',
      },
    );
    assert.equal(patched.status, 200);
    await eventually(
      async () => {
        const now = await get(url, `${APPS}/deployments/web`);
        return (
          now.status.observedGeneration === 2 && cond(now, 'Progressing')?.reason === 'NewReplicaSetAvailable'
        );
      },
      5000,
      'rolled out',
    );
    const sets = await list(url, `${APPS}/replicasets`);
    assert.deepEqual(
      sets.map((s) => [s.metadata.annotations['deployment.kubernetes.io/revision'], s.spec.replicas]).sort(),
      [
        ['1', 0],
        ['2', 2],
      ],
    );
    assert.equal(
      (await get(url, `${APPS}/deployments/web`)).metadata.annotations['deployment.kubernetes.io/revision'],
      '2',
    );
    const images = (await list(url, '/api/v1/namespaces/default/pods')).map(
      (p) => p.spec.containers[0].image,
    );
    assert.deepEqual(images, ['web:2', 'web:2']);

    // Scaled down, then deleted: its ReplicaSets and Pods go with it.
    await api(
      url,
      'PATCH',
      `${APPS}/deployments/web`,
      { spec: { replicas: 1 } },
      {
        'Content-Type': 'application/merge-patch+json',
      },
    );
    await eventually(
      async () => (await list(url, '/api/v1/namespaces/default/pods')).length === 1,
      5000,
      'scaled',
    );
    assert.equal((await api(url, 'DELETE', `${APPS}/deployments/web`)).status, 200);
    await eventually(
      async () =>
        (await list(url, `${APPS}/replicasets`)).length === 0 &&
        (await list(url, '/api/v1/namespaces/default/pods')).length === 0,
      5000,
      'collected',
    );
  });

  it('a DaemonSet runs on each Node its selector takes, follows Node labels, and goes with its Pods', async (t) => {
    const { url } = await useSandbox(t, { workloads: true });
    await addNode(url, 'edge-1', '127.0.0.21', { role: 'edge' });
    await addNode(url, 'core-1', '127.0.0.22');
    await addNode(url, 'edge-2', '127.0.0.23', { role: 'edge' }, false);
    const ds = {
      metadata: { name: 'agent' },
      spec: {
        selector: { matchLabels: { app: 'web' } },
        template: template('agent:1', { nodeSelector: { role: 'edge' } }),
      },
    };
    assert.equal((await api(url, 'POST', `${APPS}/daemonsets`, ds)).status, 201);
    await eventually(
      async () => (await get(url, `${APPS}/daemonsets/agent`)).status?.desiredNumberScheduled === 2,
      5000,
      'scheduled',
    );
    const pods = await list(url, '/api/v1/namespaces/default/pods');
    const byNode = Object.fromEntries(pods.map((p) => [p.spec.nodeName, p.status.phase]));
    // A DaemonSet's Pod is placed on a NotReady node too, where it waits.
    assert.deepEqual(byNode, { 'edge-1': 'Running', 'edge-2': 'Pending' });
    const status = (await get(url, `${APPS}/daemonsets/agent`)).status;
    assert.deepEqual(
      [
        status.desiredNumberScheduled,
        status.currentNumberScheduled,
        status.numberReady,
        status.numberUnavailable,
      ],
      [2, 2, 1, 1],
    );
    // core-1 labelled edge: a Pod there too.
    await api(
      url,
      'PATCH',
      '/api/v1/nodes/core-1',
      { metadata: { labels: { role: 'edge' } } },
      {
        'Content-Type': 'application/merge-patch+json',
      },
    );
    await eventually(
      async () => (await get(url, `${APPS}/daemonsets/agent`)).status?.numberReady === 2,
      5000,
      'followed the label',
    );
    assert.equal((await api(url, 'DELETE', `${APPS}/daemonsets/agent`)).status, 200);
    await eventually(
      async () => (await list(url, '/api/v1/namespaces/default/pods')).length === 0,
      5000,
      'collected',
    );
  });

  it("a PodDisruptionBudget's status counts the healthy Pods it selects", async (t) => {
    const { url } = await useSandbox(t, { workloads: true });
    await addNode(url, 'node-1', '127.0.0.31');
    await api(url, 'POST', `${APPS}/deployments`, deployment(3));
    const pdb = {
      metadata: { name: 'web' },
      spec: { minAvailable: 2, selector: { matchLabels: { app: 'web' } } },
    };
    assert.equal(
      (await api(url, 'POST', '/apis/policy/v1/namespaces/default/poddisruptionbudgets', pdb)).status,
      201,
    );
    await eventually(
      async () =>
        (await get(url, '/apis/policy/v1/namespaces/default/poddisruptionbudgets/web')).status
          ?.currentHealthy === 3,
      5000,
      'pdb',
    );
    const s = (await get(url, '/apis/policy/v1/namespaces/default/poddisruptionbudgets/web')).status;
    assert.deepEqual([s.desiredHealthy, s.expectedPods, s.disruptionsAllowed], [2, 3, 1]);
    assert.equal(s.conditions[0].reason, 'SufficientPods');
  });

  it('a Pod the API refuses is ReplicaFailure on its ReplicaSet and Deployment; the next Deployment still runs', async (t) => {
    const { url } = await useSandbox(t, { workloads: true });
    await addNode(url, 'node-1', '127.0.0.41');
    // The sandbox checks a Pod's containers, not a Deployment's template (as an admission webhook
    // might refuse what the schema took): two containers of one name make every Pod refused.
    const long = 'bad';
    const twice = { name: 'web', image: 'web:1' };
    const bad = {
      ...deployment(1),
      metadata: { name: long },
      spec: { ...deployment(1).spec, template: { ...template('x'), spec: { containers: [twice, twice] } } },
    };
    assert.equal((await api(url, 'POST', `${APPS}/deployments`, bad)).status, 201);
    const good = { ...deployment(1), metadata: { name: 'good' } };
    assert.equal((await api(url, 'POST', `${APPS}/deployments`, good)).status, 201);
    await eventually(
      async () => cond(await get(url, `${APPS}/deployments/good`), 'Available')?.status === 'True',
      5000,
      'good runs',
    );
    await eventually(
      async () => cond(await get(url, `${APPS}/deployments/${long}`), 'ReplicaFailure') !== undefined,
      5000,
      'bad said',
    );
    const failure = cond(await get(url, `${APPS}/deployments/${long}`), 'ReplicaFailure')!;
    assert.equal(failure.reason, 'FailedCreate');
    assert.match(String(failure.message), /Duplicate value: "web"/);
    // Backed off as a work queue backs off: no hot loop of attempts and status writes.
    const rsv = async () =>
      (await list(url, `${APPS}/replicasets`)).find((r) => r.metadata.name.startsWith('bad-'))!.metadata
        .resourceVersion;
    const before = await rsv();
    await new Promise((r) => setTimeout(r, 300));
    assert.equal(await rsv(), before);
  });

  it('a failed step is tried again when its backoff ends, whatever the wall clock says', async (t) => {
    // The retry's timer runs on the event loop's clock, which can be behind the wall clock by the
    // work of a busy turn: a retry that compared Date.now() with its deadline could wake "early",
    // skip the step and never be tried again. Here the wall clock lags by 5 s once the step has
    // failed (as it would behind a loop clock that ran ahead), and the fixed ReplicaSet still runs.
    const { url } = await useSandbox(t, { workloads: true });
    await addNode(url, 'node-1', '127.0.0.42');
    const twice = { name: 'web', image: 'web:1' };
    const rs = {
      apiVersion: 'apps/v1',
      kind: 'ReplicaSet',
      metadata: { name: 'bare' },
      spec: {
        replicas: 1,
        selector: { matchLabels: { app: 'web' } },
        template: { ...template('x'), spec: { containers: [twice, twice] } },
      },
    };
    assert.equal((await api(url, 'POST', `${APPS}/replicasets`, rs)).status, 201);
    await eventually(
      async () => cond(await get(url, `${APPS}/replicasets/bare`), 'ReplicaFailure') !== undefined,
      5000,
      'refused',
    );
    const realNow = Date.now.bind(Date);
    t.mock.method(Date, 'now', () => realNow() - 5000);
    const fixed = await api(
      url,
      'PATCH',
      `${APPS}/replicasets/bare`,
      { spec: { template: { spec: { containers: [twice] } } } },
      { 'Content-Type': 'application/merge-patch+json' },
    );
    assert.equal(fixed.status, 200);
    await eventually(
      async () => (await get(url, `${APPS}/replicasets/bare`)).status?.readyReplicas === 1,
      8000,
      'retried once its backoff (at most 2 s here) ended',
    );
    assert.equal(cond(await get(url, `${APPS}/replicasets/bare`), 'ReplicaFailure'), undefined);
  });

  it('without --workloads nothing is run: a Deployment stays as written', async (t) => {
    const { url } = await useSandbox(t);
    await addNode(url, 'node-1', '127.0.0.51');
    await api(url, 'POST', `${APPS}/deployments`, deployment(1));
    await new Promise((r) => setTimeout(r, 200));
    assert.equal((await list(url, `${APPS}/replicasets`)).length, 0);
    assert.equal((await list(url, '/api/v1/namespaces/default/pods')).length, 0);
  });
});
