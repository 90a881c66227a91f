/**
 * Issue 47 item 4 (and 49 item 1): the scale subresource, with the real kubectl. `kubectl scale`
 * of a Deployment in the sandbox with workloads changes spec.replicas and the Pods follow; GET of
 * the Scale says the replicas and the selector; a negative count is the API server's 422; a PUT
 * with a stale resourceVersion is a 409; a ReplicaSet scales too; a kind without the subresource is
 * a 404; discovery lists `deployments/scale` (autoscaling/v1 Scale).
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import { ensureKubeTools } from '../support/kube-tools.ts';
import { api, eventually, useSandbox } from '../support/sandbox.ts';

type Obj = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
const run = promisify(execFile);
const APPS = '/apis/apps/v1/namespaces/default';

describe('the scale subresource', () => {
  let kubectl = '';
  before(() => {
    kubectl = ensureKubeTools().kubectl;
  });

  it('kubectl scale moves the Pods; bad counts and stale versions are refused', async (t) => {
    const sb = await useSandbox(t, { workloads: true });
    const k = async (...args: string[]) =>
      (
        await run(kubectl, args, {
          env: { ...process.env, KUBECONFIG: sb.kubeconfigPath, HOME: sb.dir },
          timeout: 30_000,
        })
      ).stdout;
    const disco = (await api(sb.url, 'GET', '/apis/apps/v1')).body as Obj;
    const entry = (disco.resources as Obj[]).find((r) => r.name === 'deployments/scale');
    assert.deepEqual([entry?.group, entry?.version, entry?.kind], ['autoscaling', 'v1', 'Scale']);

    await k('create', 'deployment', 'web', '--image=web:1', '--replicas=1');
    const pods = async () =>
      ((await api(sb.url, 'GET', '/api/v1/namespaces/default/pods')).body.items as Obj[]).length;
    await eventually(async () => (await pods()) === 1, 5000, 'one Pod');
    assert.match(await k('scale', 'deployment/web', '--replicas=3'), /deployment.apps\/web scaled/);
    await eventually(async () => (await pods()) === 3, 5000, 'three Pods');
    const scale = (await api(sb.url, 'GET', `${APPS}/deployments/web/scale`)).body as Obj;
    assert.equal(scale.kind, 'Scale');
    assert.equal(scale.spec.replicas, 3);
    assert.equal(scale.status.selector, 'app=web');
    assert.match(await k('scale', 'deployment/web', '--replicas=2', '--current-replicas=3'), /scaled/);
    await eventually(async () => (await pods()) === 2, 5000, 'two Pods');

    const neg = await api(
      sb.url,
      'PATCH',
      `${APPS}/deployments/web/scale`,
      { spec: { replicas: -1 } },
      {
        'Content-Type': 'application/merge-patch+json',
      },
    );
    assert.equal(neg.status, 422);
    assert.match(String(neg.body.message), /spec\.replicas/);
    const stale = await api(sb.url, 'PUT', `${APPS}/deployments/web/scale`, {
      apiVersion: 'autoscaling/v1',
      kind: 'Scale',
      metadata: { name: 'web', namespace: 'default', resourceVersion: '1' },
      spec: { replicas: 5 },
    });
    assert.equal(stale.status, 409);
    assert.equal(
      ((await api(sb.url, 'GET', `${APPS}/deployments/web`)).body as Obj).spec.replicas,
      2,
      'unchanged',
    );

    const rs = ((await api(sb.url, 'GET', `${APPS}/replicasets`)).body.items as Obj[])[0]!;
    const r = await api(sb.url, 'GET', `${APPS}/replicasets/${rs.metadata.name}/scale`);
    assert.equal(r.status, 200);
    assert.equal((r.body as Obj).spec.replicas, 2);
    assert.equal((await api(sb.url, 'GET', '/api/v1/namespaces/default/services/x/scale')).status, 404);
  });
});
