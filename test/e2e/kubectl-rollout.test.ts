/**
 * Issue 47 item 4: `kubectl rollout` on the sandbox with workloads, with the real kubectl: history
 * lists each template's revision (with its change-cause), `restart` rolls a new ReplicaSet, `undo`
 * rolls back to the previous template (its ReplicaSet becomes the newest revision again, no third
 * one is made) and `undo --to-revision` to a named one, `status` finishes once the rollout has;
 * bad input: an undo to a revision that does not exist is kubectl's error, and a paused Deployment
 * cannot be undone (as on a cluster), its template unchanged.
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
// How long `kubectl rollout status` waits: a rollout here takes a second or two, but on a loaded
// 2-core machine (the whole suite beside it) one clean clone saw a first rollout outlast 30 s.
const ROLLOUT_WAIT = '--timeout=90s';

describe('kubectl rollout', () => {
  let kubectl = '';
  before(() => {
    kubectl = ensureKubeTools().kubectl;
  });

  it('history, restart, undo and undo --to-revision; bad revisions and paused Deployments refused', async (t) => {
    const sb = await useSandbox(t, { workloads: true });
    const k = async (...args: string[]) =>
      (
        await run(kubectl, args, {
          env: { ...process.env, KUBECONFIG: sb.kubeconfigPath, HOME: sb.dir },
          timeout: 120_000,
        })
      ).stdout;
    // A rollout status that fails says what the sandbox held: the Deployment's status, each
    // ReplicaSet's and each Pod's, so a failure in CI can be read from its log alone.
    const status = async () => {
      try {
        return await k('rollout', 'status', 'deployment/web', ROLLOUT_WAIT);
      } catch (err) {
        const d = (await api(sb.url, 'GET', `${APPS}/deployments/web`)).body as Obj;
        const rs = (await sets()).map((r) => ({
          name: r.metadata.name,
          revision: r.metadata.annotations?.['deployment.kubernetes.io/revision'],
          spec: r.spec.replicas,
          status: r.status,
        }));
        const pods = (
          ((await api(sb.url, 'GET', '/api/v1/namespaces/default/pods')).body.items as Obj[]) ?? []
        ).map((p) => ({
          name: p.metadata.name,
          deleting: Boolean(p.metadata.deletionTimestamp),
          node: p.spec.nodeName,
          conditions: p.status?.conditions,
        }));
        const state = JSON.stringify({ generation: d.metadata.generation, status: d.status, rs, pods });
        throw new Error(`${(err as Error).message}\nsandbox: ${state}`, { cause: err });
      }
    };
    const image = async () =>
      ((await api(sb.url, 'GET', `${APPS}/deployments/web`)).body as Obj).spec.template.spec.containers[0]
        .image;
    const sets = async () => ((await api(sb.url, 'GET', `${APPS}/replicasets`)).body.items as Obj[]) ?? [];
    const podImages = async () =>
      new Set(
        (((await api(sb.url, 'GET', '/api/v1/namespaces/default/pods')).body.items as Obj[]) ?? [])
          .filter((p) => !p.metadata.deletionTimestamp)
          .map((p) => p.spec.containers[0].image as string),
      );

    // A Ready Node for the Pods (the sandbox's scheduler binds them to one).
    assert.equal((await api(sb.url, 'POST', '/api/v1/nodes', { metadata: { name: 'n1' } })).status, 201);
    const ready = { status: { conditions: [{ type: 'Ready', status: 'True' }] } };
    const merge = { 'Content-Type': 'application/merge-patch+json' };
    assert.equal((await api(sb.url, 'PATCH', '/api/v1/nodes/n1/status', ready, merge)).status, 200);
    await k('create', 'deployment', 'web', '--image=web:1', '--replicas=2');
    await status();
    // The change-cause annotated after each change, as the docs say: kube-controller-manager copies
    // the Deployment's annotations to its newest ReplicaSet.
    await k('set', 'image', 'deployment/web', 'web=web:2');
    await k('annotate', 'deployment/web', 'kubernetes.io/change-cause=image 2');
    await status();
    await k('set', 'image', 'deployment/web', 'web=web:3');
    await k('annotate', 'deployment/web', '--overwrite', 'kubernetes.io/change-cause=image 3');
    await status();
    const history = await k('rollout', 'history', 'deployment/web');
    assert.match(history, /^1 +<none>$/m);
    assert.match(history, /^2 +image 2$/m);
    assert.match(history, /^3 +image 3$/m);
    assert.equal((await sets()).length, 3);

    // undo: back to web:2, its ReplicaSet revision 4 now, no new ReplicaSet.
    assert.match(await k('rollout', 'undo', 'deployment/web'), /rolled back/);
    assert.equal(await image(), 'web:2');
    await status();
    await eventually(
      async () => {
        const imgs = await podImages();
        return imgs.size === 1 && imgs.has('web:2');
      },
      10_000,
      "the Pods are web:2's",
    );
    assert.equal((await sets()).length, 3, 'the old ReplicaSet taken again, none made');
    const rev = (await sets()).find((rs) => rs.spec.template.spec.containers[0].image === 'web:2')!;
    assert.equal(rev.metadata.annotations['deployment.kubernetes.io/revision'], '4');
    assert.doesNotMatch(await k('rollout', 'history', 'deployment/web'), /^2 /m, 'revision 2 is 4 now');

    // undo --to-revision=1: web:1.
    await k('rollout', 'undo', 'deployment/web', '--to-revision=1');
    assert.equal(await image(), 'web:1');
    await status();

    // restart: a new template (the restartedAt annotation), a new ReplicaSet, Pods replaced.
    const before = (await sets()).length;
    await k('rollout', 'restart', 'deployment/web');
    await status();
    assert.equal((await sets()).length, before + 1);

    // Bad input: a revision that does not exist, and a paused Deployment.
    await assert.rejects(
      k('rollout', 'undo', 'deployment/web', '--to-revision=42'),
      /unable to find specified revision 42/,
    );
    await k('rollout', 'pause', 'deployment/web');
    await assert.rejects(k('rollout', 'undo', 'deployment/web'), /paused/);
    assert.equal(await image(), 'web:1', 'the template unchanged');
    await k('rollout', 'resume', 'deployment/web');
  });
});
