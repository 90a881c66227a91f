/**
 * Paginated lists (limit and continue), as client-go and the controller's informers page them:
 * pages of any size join to the whole list in its order, with selectors, per namespace and
 * cluster-scoped; a page costs its page (the sandbox keeps its keys sorted between changes).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { api, useSandbox } from '../../support/sandbox.ts';

const POD = (name: string) => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name, labels: { app: 'web' } },
  spec: { nodeName: 'n1', containers: [{ name: 'web', image: 'nginx:1.27' }] },
});
const PODS = '/api/v1/namespaces/default/pods';

describe('sandbox API: paginated lists', () => {
  it('lists page with limit and continue', async (t) => {
    const { url } = await useSandbox(t);
    for (let i = 0; i < 5; i++) await api(url, 'POST', PODS, POD(`p${i}`));
    const first = await api(url, 'GET', `${PODS}?limit=2`);
    const meta = first.body.metadata as { continue: string; resourceVersion: string };
    assert.equal((first.body.items as unknown[]).length, 2);
    assert.ok(meta.continue);
    const second = await api(url, 'GET', `${PODS}?limit=10&continue=${meta.continue}`);
    const names = (second.body.items as { metadata: { name: string } }[]).map((p) => p.metadata.name);
    assert.deepEqual(names, ['p2', 'p3', 'p4']);
    assert.equal((second.body.metadata as { continue?: string }).continue, undefined);
  });

  it('pages of any size join to the whole list, in one namespace or all, with a label selector and cluster-scoped', async (t) => {
    const { url } = await useSandbox(t);
    await api(url, 'POST', '/api/v1/namespaces', { metadata: { name: 'other' } });
    for (let i = 0; i < 7; i++) {
      const pod = POD(`p${i}`) as { metadata: { labels?: Record<string, string> } };
      pod.metadata.labels = { half: String(i % 2) };
      await api(url, 'POST', i < 4 ? PODS : '/api/v1/namespaces/other/pods', pod);
    }
    for (let i = 0; i < 3; i++) await api(url, 'POST', '/api/v1/nodes', { metadata: { name: `n${i}` } });
    const names = (b: { items?: unknown }) =>
      (b.items as { metadata: { namespace?: string; name: string } }[]).map(
        (o) => `${o.metadata.namespace ?? ''}/${o.metadata.name}`,
      );
    for (const path of [PODS, '/api/v1/pods', '/api/v1/pods?labelSelector=half%3D1', '/api/v1/nodes']) {
      const whole = names((await api(url, 'GET', path)).body);
      assert.ok(whole.length > 0, path);
      for (const limit of [1, 2, 3]) {
        const got: string[] = [];
        let cont: string | undefined;
        for (let page = 0; page < 20; page++) {
          const sep = path.includes('?') ? '&' : '?';
          const r = await api(url, 'GET', `${path}${sep}limit=${limit}${cont ? `&continue=${cont}` : ''}`);
          const items = names(r.body);
          assert.ok(items.length <= limit);
          got.push(...items);
          cont = (r.body.metadata as { continue?: string }).continue;
          if (!cont) break;
        }
        assert.deepEqual(got, whole, `${path} by ${limit}`);
      }
    }
  });

  it('a page after a change sees it: objects created or deleted between pages', async (t) => {
    const { url } = await useSandbox(t);
    for (const n of ['a', 'c', 'e']) await api(url, 'POST', PODS, POD(n));
    const first = await api(url, 'GET', `${PODS}?limit=1`);
    const cont = (first.body.metadata as { continue: string }).continue;
    await api(url, 'POST', PODS, POD('b'));
    await api(url, 'DELETE', `${PODS}/e`);
    const rest = await api(url, 'GET', `${PODS}?limit=10&continue=${cont}`);
    const names = (rest.body.items as { metadata: { name: string } }[]).map((p) => p.metadata.name);
    assert.deepEqual(names, ['b', 'c']);
  });
});
