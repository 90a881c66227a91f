/**
 * The kinds the Helm chart renders, stored with the real strategies' rules.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { api, useSandbox } from '../../support/sandbox.ts';

const causes = (r: { body: Record<string, unknown> }) =>
  ((r.body.details as { causes?: { field: string; message: string }[] } | undefined)?.causes ?? []).map(
    (c) => `${c.field}: ${c.message}`,
  );

const deployment = (labels: Record<string, string>, selector: Record<string, string>) => ({
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name: 'ctl' },
  spec: {
    selector: { matchLabels: selector },
    template: { metadata: { labels }, spec: { containers: [{ name: 'c', image: 'x' }] } },
  },
});

describe('sandbox: kinds of the Helm chart', () => {
  it('Secrets fold stringData into base64 data; bad keys and bad base64 are refused; ConfigMaps store data', async (t) => {
    const { url } = await useSandbox(t);
    const s = await api(url, 'POST', '/api/v1/namespaces/default/secrets', {
      metadata: { name: 'creds' },
      stringData: { username: 'admin' },
    });
    assert.equal(s.status, 201);
    assert.deepEqual(s.body.data, { username: Buffer.from('admin').toString('base64') });
    assert.equal(s.body.type, 'Opaque');
    assert.equal(s.body.stringData, undefined);
    const bad = await api(url, 'POST', '/api/v1/namespaces/default/secrets', {
      metadata: { name: 'bad' },
      data: { 'a/b': 'not base64!' },
    });
    assert.equal(bad.status, 422);
    assert.ok(causes(bad).some((c) => /data\[a\/b\]: .*valid config key/.test(c)));
    assert.ok(causes(bad).some((c) => /illegal base64 data/.test(c)));
    const cm = await api(url, 'POST', '/api/v1/namespaces/default/configmaps', {
      metadata: { name: 'cfg' },
      data: { 'config.yaml': 'clusterName: c1\n' },
    });
    assert.equal(cm.status, 201);
    assert.equal(
      (await api(url, 'POST', '/api/v1/namespaces/default/serviceaccounts', { metadata: { name: 'sa' } }))
        .status,
      201,
    );
  });

  it('Deployments and DaemonSets: the selector must match the template and cannot change; replicas default to 1', async (t) => {
    const { url } = await useSandbox(t);
    const path = '/apis/apps/v1/namespaces/default/deployments';
    const mismatch = await api(url, 'POST', path, deployment({ app: 'a' }, { app: 'b' }));
    assert.equal(mismatch.status, 422);
    assert.ok(causes(mismatch).some((c) => /`selector` does not match template `labels`/.test(c)));
    const ok = await api(url, 'POST', path, deployment({ app: 'a' }, { app: 'a' }));
    assert.equal(ok.status, 201);
    assert.equal((ok.body.spec as { replicas: number }).replicas, 1);
    const changed = await api(url, 'PUT', `${path}/ctl`, {
      ...deployment({ app: 'a', x: 'y' }, { app: 'a', x: 'y' }),
      metadata: ok.body.metadata,
    });
    assert.equal(changed.status, 422);
    assert.ok(causes(changed).some((c) => /spec\.selector: .*field is immutable/.test(c)));
    const ds = await api(url, 'POST', '/apis/apps/v1/namespaces/default/daemonsets', {
      ...deployment({ app: 'a' }, { app: 'a' }),
      kind: 'DaemonSet',
      metadata: { name: 'agent' },
    });
    assert.equal(ds.status, 201);
  });

  it('PodDisruptionBudgets take one of minAvailable and maxUnavailable; RBAC rules need verbs and groups; roleRef is immutable', async (t) => {
    const { url } = await useSandbox(t);
    const pdb = await api(url, 'POST', '/apis/policy/v1/namespaces/default/poddisruptionbudgets', {
      metadata: { name: 'p' },
      spec: { minAvailable: 1, maxUnavailable: 1, selector: { matchLabels: { app: 'a' } } },
    });
    assert.equal(pdb.status, 422);
    const role = await api(url, 'POST', '/apis/rbac.authorization.k8s.io/v1/clusterroles', {
      metadata: { name: 'npl-lb:controller' },
      rules: [{ apiGroups: [''], resources: ['pods'] }],
    });
    assert.equal(role.status, 422);
    assert.ok(causes(role).some((c) => /rules\[0\]\.verbs/.test(c)));
    const good = await api(url, 'POST', '/apis/rbac.authorization.k8s.io/v1/clusterroles', {
      metadata: { name: 'npl-lb:controller' },
      rules: [{ apiGroups: [''], resources: ['pods'], verbs: ['get', 'list', 'watch'] }],
    });
    assert.equal(good.status, 201, 'RBAC names are path segments: a colon is fine');
    const rb = '/apis/rbac.authorization.k8s.io/v1/namespaces/default/rolebindings';
    const made = await api(url, 'POST', rb, {
      metadata: { name: 'b' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'npl-lb:controller' },
      subjects: [{ kind: 'ServiceAccount', name: 'sa', namespace: 'default' }],
    });
    assert.equal(made.status, 201);
    const moved = await api(
      url,
      'PATCH',
      `${rb}/b`,
      { roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'other' } },
      { 'Content-Type': 'application/merge-patch+json' },
    );
    assert.equal(moved.status, 422);
    assert.ok(causes(moved).some((c) => /cannot change roleRef/.test(c)));
  });
});
