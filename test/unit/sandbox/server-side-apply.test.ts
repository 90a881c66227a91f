/**
 * Server-side apply's field ownership (src/sandbox/apply.ts) against the Kubernetes schemas: the
 * FieldsV1 an object makes (associative lists by key, atomic lists and maps as one field), merges
 * along the list types, conflicts only where values differ, force taking fields over, removal of
 * what a manager stops applying unless another owns it, and another write's Update entry taking
 * what it changed.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { leaves, managedOf, ServerSideApply } from '../../../src/sandbox/apply.ts';
import { ApiError } from '../../../src/sandbox/status.ts';
import { OpenApi } from '../../../src/sandbox/openapi.ts';
import type { JsonObject } from '../../../src/sandbox/openapi.ts';

const api = new OpenApi();
const ssa = new ServerSideApply(api);
const schema = api.definition('io.k8s.api.apps.v1.Deployment');
const dep = (spec: JsonObject, labels: JsonObject = { app: 'web' }): JsonObject => ({
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name: 'web', namespace: 'default', labels },
  spec,
});
const pod = (containers: JsonObject[]) => ({ metadata: { labels: { app: 'web' } }, spec: { containers } });
/** An apply; one that changes nothing gives the live object back, as the API server does. */
const apply = (
  live: JsonObject | undefined,
  applied: JsonObject,
  manager: string,
  force = false,
): JsonObject => {
  const out = ssa.apply({
    live,
    applied,
    manager,
    force,
    schema,
    apiVersion: 'apps/v1',
    now: 't',
    kind: 'Deployment',
    name: 'web',
  });
  return out === 'unchanged' ? live! : out;
};
const owned = (obj: JsonObject, manager: string) =>
  leaves(managedOf(obj).find((m) => m.manager === manager)?.fieldsV1 ?? {}).map((p) => p.join(' '));

describe('server-side apply', () => {
  it('FieldsV1: containers by name, ports by port and protocol, the selector atomic, status and identity unowned', () => {
    const obj = apply(
      undefined,
      {
        ...dep({
          replicas: 2,
          selector: { matchLabels: { app: 'web' } },
          template: pod([
            { name: 'c', image: 'i', ports: [{ containerPort: 80, protocol: 'TCP' }], args: ['a', 'b'] },
          ]),
        }),
        status: { replicas: 1 },
      },
      'm',
    );
    const paths = owned(obj, 'm');
    assert.ok(paths.includes('f:spec f:selector'), 'LabelSelector is an atomic map');
    assert.ok(
      paths.includes('f:spec f:template f:spec f:containers k:{"name":"c"} f:args'),
      'a list without a type is atomic',
    );
    assert.ok(
      paths.includes(
        'f:spec f:template f:spec f:containers k:{"name":"c"} f:ports k:{"containerPort":80,"protocol":"TCP"} .',
      ),
    );
    assert.ok(paths.includes('f:metadata f:labels f:app'));
    assert.ok(!paths.some((p) => /status|f:name |f:namespace|apiVersion|kind/.test(p)), paths.join('\n'));
  });

  it('merges by key, conflicts only where another manager set another value, force takes over', () => {
    const base = apply(undefined, dep({ replicas: 2, template: pod([{ name: 'a', image: 'a:1' }]) }), 'one');
    // Another manager adds a container: merged by name, both kept.
    const both = apply(base, dep({ template: pod([{ name: 'b', image: 'b:1' }]) }), 'two');
    const names = (
      (both.spec as JsonObject).template as { spec: { containers: { name: string }[] } }
    ).spec.containers.map((c) => c.name);
    assert.deepEqual(names, ['a', 'b']);
    // The same value is no conflict (co-owned); another one is, naming manager and field.
    apply(both, dep({ replicas: 2 }), 'two');
    assert.throws(
      () => apply(both, dep({ replicas: 5 }), 'two'),
      (e: ApiError) => e.code === 409 && /conflict with "one": \.spec\.replicas/.test(e.message),
    );
    const forced = apply(both, dep({ replicas: 5 }), 'two', true);
    assert.equal((forced.spec as JsonObject).replicas, 5);
    assert.ok(!owned(forced, 'one').includes('f:spec f:replicas'), 'taken over');
    assert.ok(owned(forced, 'two').includes('f:spec f:replicas'));
  });

  it('what a manager stops applying goes, unless another manager owns it', () => {
    const a = apply(undefined, dep({ replicas: 1 }, { app: 'web', tier: 'x', team: 't' }), 'one');
    const b = apply(a, dep({}, { team: 't' }), 'two');
    const c = apply(b, dep({ replicas: 1 }, { app: 'web' }), 'one');
    assert.deepEqual(
      (c.metadata as JsonObject).labels,
      { app: 'web', team: 't' },
      'tier gone, team kept for "two"',
    );
  });

  it("another write's Update entry owns what it changed, taken from the managers that had it", () => {
    const a = apply(undefined, dep({ replicas: 1, paused: false }), 'applier');
    const after = structuredClone(a);
    (after.spec as JsonObject).replicas = 7;
    ssa.recordUpdate({ before: a, after, manager: 'kubectl-scale', schema, apiVersion: 'apps/v1', now: 't' });
    assert.deepEqual(owned(after, 'kubectl-scale'), ['f:spec f:replicas']);
    assert.ok(!owned(after, 'applier').includes('f:spec f:replicas'));
    assert.ok(owned(after, 'applier').includes('f:spec f:paused'));
    // Nothing changed: no new entry, no new time.
    const again = structuredClone(after);
    ssa.recordUpdate({
      before: after,
      after: again,
      manager: 'other',
      schema,
      apiVersion: 'apps/v1',
      now: 'later',
    });
    assert.deepEqual(managedOf(again), managedOf(after));
  });
  it('a re-apply compares field by field through list elements and keys that name inherited properties', () => {
    const raw = (live: JsonObject | undefined, applied: JsonObject, manager: string) =>
      ssa.apply({
        live,
        applied,
        manager,
        force: false,
        schema,
        apiVersion: 'apps/v1',
        now: 't2',
        kind: 'Deployment',
        name: 'web',
      });
    // Labels named as Object.prototype's members (and __proto__, an own key from JSON) are data.
    const labels = JSON.parse('{"__proto__":"p","constructor":"c","toString":"s"}') as JsonObject;
    const cfg = dep({ template: pod([{ name: 'a', image: 'a:1', ports: [{ containerPort: 80 }] }]) }, labels);
    const a = apply(undefined, cfg, 'one');
    assert.equal(raw(a, structuredClone(cfg), 'one'), 'unchanged', 'the same file again changes nothing');
    // A label live under another value (an inherited name included) is a change, never "unchanged".
    const changedLabel = structuredClone(cfg);
    (changedLabel.metadata as JsonObject).labels = JSON.parse(
      '{"__proto__":"p","constructor":"x","toString":"s"}',
    ) as JsonObject;
    const next = raw(a, changedLabel, 'one');
    assert.notEqual(next, 'unchanged');
    assert.equal(((next as JsonObject).metadata as { labels: JsonObject }).labels.constructor, 'x');
    // Another manager setting a container's image by its key is found through the list element.
    assert.throws(
      () => apply(a, dep({ template: pod([{ name: 'a', image: 'a:2' }]) }), 'two'),
      (e: ApiError) =>
        e.code === 409 &&
        /conflict with "one": \.spec\.template\.spec\.containers\[name="a"\]\.image/.test(e.message),
    );
    // The same image from another manager is co-owned, no conflict.
    apply(a, dep({ template: pod([{ name: 'a', image: 'a:1' }]) }), 'two');
  });
});
