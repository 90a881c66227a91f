/**
 * Issue 49, item 1: a property over every built-in kind the sandbox serves. Any object the OpenAPI
 * schema admits (generated from the bundled schema: test/support/schema-arbitrary.ts), applied
 * server-side, then applied again unchanged, is unchanged: the same generation, the same fields
 * owned by the applier (managedFields: fieldsV1, operation and time), the same spec. This is the
 * class of the defect the issue found (list-map keys built without their defaulted fields: a
 * Service port without `protocol` failing its second apply, a Deployment's container port copied
 * three times and its generation at 3). Each kind runs in a sandbox of its own (a webhook
 * configuration or an admission policy cannot reach the next kind); objects the API server refuses
 * on their first apply are outside the property and counted, and most of each kind's must pass.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { apiVersionOf, RESOURCE_TYPES, type ResourceType } from '../../../src/sandbox/kinds.ts';
import { type JsonObject, OpenApi } from '../../../src/sandbox/openapi.ts';
import { SchemaArbitraries } from '../../support/schema-arbitrary.ts';
import { useSandbox } from '../../support/sandbox.ts';

const RUNS = 12;
const arbitraries = new SchemaArbitraries(new OpenApi());

const asObj = (v: unknown): JsonObject =>
  typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as JsonObject) : {};

/** What a Pod template needs to be taken at all: containers with names and images. */
function podSpec(spec0: unknown): JsonObject {
  const spec = asObj(spec0);
  const named = (list: unknown, prefix: string) =>
    (Array.isArray(list) ? list : []).map((c, i) => ({ ...asObj(c), name: `${prefix}${i}`, image: 'i' }));
  const containers = named(spec.containers, 'c');
  delete spec.ephemeralContainers;
  return {
    ...spec,
    containers: containers.length > 0 ? containers : [{ name: 'c0', image: 'i' }],
    ...(spec.initContainers ? { initContainers: named(spec.initContainers, 'i') } : {}),
  };
}

const template = (t: unknown, extra: JsonObject = {}): JsonObject => ({
  metadata: { labels: { app: 'a' } },
  spec: { ...podSpec(asObj(t).spec), ...extra },
});

/** Per kind, the few fields without which no API server takes the object (the rest is random). */
const FIXUPS: Record<string, (o: JsonObject) => JsonObject> = {
  Pod: (o) => ({ ...o, spec: podSpec(o.spec) }),
  Deployment: (o) => ({
    ...o,
    spec: {
      ...asObj(o.spec),
      selector: { matchLabels: { app: 'a' } },
      template: template(asObj(o.spec).template),
    },
  }),
  ReplicaSet: (o) => FIXUPS.Deployment!(o),
  DaemonSet: (o) => FIXUPS.Deployment!(o),
  Job: (o) => {
    const spec = { ...asObj(o.spec) };
    delete spec.selector;
    delete spec.manualSelector;
    return { ...o, spec: { ...spec, template: template(spec.template, { restartPolicy: 'Never' }) } };
  },
  Service: (o) => {
    const spec = { ...asObj(o.spec) };
    for (const k of ['clusterIP', 'clusterIPs', 'ipFamilies', 'loadBalancerIP', 'externalIPs'])
      delete spec[k];
    const ports = (Array.isArray(spec.ports) ? spec.ports : []).map((p, i) => ({
      ...asObj(p),
      name: `p${i}`,
    }));
    return {
      ...o,
      spec: {
        ...spec,
        ports: ports.length > 0 ? ports : [{ port: 1 }],
        ...(spec.type === 'ExternalName' ? { externalName: 'a' } : {}),
      },
    };
  },
  Ingress: (o) => ({
    ...o,
    spec: { ...asObj(o.spec), defaultBackend: { service: { name: 'a', port: { number: 1 } } } },
  }),
  // A rule names at least one verb; a budget one of minAvailable and maxUnavailable.
  Role: (o) => ({
    ...o,
    ...(Array.isArray(o.rules) ? { rules: o.rules.map((r) => ({ ...asObj(r), verbs: ['get'] })) } : {}),
  }),
  ClusterRole: (o) => FIXUPS.Role!(o),
  PodDisruptionBudget: (o) => {
    const spec = { ...asObj(o.spec) };
    delete spec.maxUnavailable;
    return { ...o, spec };
  },
  IngressClass: (o) => ({ ...o, spec: { ...asObj(o.spec), controller: 'example.com/a' } }),
  CustomResourceDefinition: (o) => ({
    ...o,
    spec: {
      ...asObj(o.spec),
      group: 'example.com',
      scope: 'Namespaced',
      names: { plural: 'widgets', singular: 'widget', kind: 'Widget', listKind: 'WidgetList' },
      versions: [
        {
          name: 'v1',
          served: true,
          storage: true,
          schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } },
        },
      ],
    },
  }),
};

const pathOf = (t: ResourceType, name: string) =>
  `${t.group ? `/apis/${t.group}` : '/api'}/${t.version}${t.namespaced ? '/namespaces/default' : ''}/${t.plural}/${name}`;

const ours = (o: JsonObject) =>
  (Array.isArray(asObj(o.metadata).managedFields)
    ? (asObj(o.metadata).managedFields as JsonObject[])
    : []
  ).filter((m) => m.manager === 'property');

describe('server-side apply, twice unchanged, changes nothing: every built-in kind', () => {
  const kinds = RESOURCE_TYPES.filter((t) => !t.storage);
  for (const t of kinds)
    it(`${apiVersionOf(t)} ${t.kind}`, async (tc) => {
      const sb = await useSandbox(tc);
      const apply = async (name: string, body: JsonObject) => {
        const res = await fetch(`${sb.url}${pathOf(t, name)}?fieldManager=property`, {
          method: 'PATCH',
          headers: { 'Content-Type': 'application/apply-patch+yaml' },
          body: JSON.stringify(body),
        });
        return { status: res.status, body: (await res.json()) as JsonObject };
      };
      let accepted = 0;
      const refused = new Map<string, number>();
      let n = 0;
      await fc.assert(
        fc.asyncProperty(arbitraries.of(t.definition), async (generated) => {
          const name = t.kind === 'CustomResourceDefinition' ? 'widgets.example.com' : `obj-${n++}`;
          const fixed = (FIXUPS[t.kind] ?? ((o: JsonObject) => o))(structuredClone(generated));
          const body: JsonObject = {
            ...fixed,
            apiVersion: apiVersionOf(t),
            kind: t.kind,
            metadata: { name, labels: { app: 'a' } },
          };
          const first = await apply(name, body);
          if (first.status >= 400) {
            const why = String(first.body.message ?? first.status).slice(0, 120);
            refused.set(why, (refused.get(why) ?? 0) + 1);
            return;
          }
          accepted++;
          const second = await apply(name, body);
          assert.equal(second.status, 200, `second apply: ${JSON.stringify(second.body).slice(0, 400)}`);
          const meta = (o: JsonObject) => asObj(o.metadata);
          assert.equal(meta(second.body).generation, meta(first.body).generation, 'generation');
          assert.deepEqual(ours(second.body), ours(first.body), 'managedFields of the applier');
          assert.deepEqual(second.body.spec, first.body.spec, 'spec');
          if (t.kind === 'CustomResourceDefinition')
            assert.equal(
              (await fetch(`${sb.url}${pathOf(t, name)}`, { method: 'DELETE' })).status < 300,
              true,
            );
        }),
        { numRuns: RUNS, seed: 4242, endOnFailure: true },
      );
      // Most generated objects are ones an API server takes: else the property proves little.
      assert.ok(
        accepted >= RUNS / 2,
        `${t.kind}: ${accepted} of ${RUNS} taken; refused: ${JSON.stringify([...refused])}`,
      );
    });
});
