/**
 * Protobuf responses: the sandbox answers a client that prefers protobuf (as client-go does) with
 * the kind's message, and that message decodes back to exactly the JSON it answers others with -
 * for objects carrying every apimachinery type with a JSON form of its own (times, micro-times,
 * int-or-string, quantities, bytes, managed fields, inlined structs) and for lists. A client that
 * does not prefer it, a Table, a custom resource and an error still get JSON.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { KUBE_PROTOBUF, decodeProtobufBody } from '../../../src/sandbox/protobuf.ts';
import { definitionOrList, prefersProtobuf } from '../../../src/sandbox/protobuf-encode.ts';
import { OpenApi } from '../../../src/sandbox/openapi.ts';
import { installNplLbCrds } from '../../../src/sandbox/npl-lb-crds.ts';
import { api, useSandbox } from '../../support/sandbox.ts';

const CLIENT_GO = `${KUBE_PROTOBUF}, application/json`;
const openapi = new OpenApi();

async function getBoth(url: string, path: string): Promise<{ json: unknown; proto: Buffer; type: string }> {
  const json = (await api(url, 'GET', path)).body;
  const res = await fetch(url + path, { headers: { Accept: CLIENT_GO } });
  return { json, proto: Buffer.from(await res.arrayBuffer()), type: res.headers.get('content-type') ?? '' };
}

const OBJECTS: [string, string, object][] = [
  [
    '/api/v1/namespaces/default/pods',
    'web',
    {
      metadata: { name: 'web', labels: { app: 'web' }, annotations: { a: 'b' } },
      spec: {
        containers: [
          {
            name: 'web',
            image: 'web:1',
            ports: [{ name: 'http', containerPort: 8080 }],
            resources: { requests: { cpu: '250m', memory: '64Mi' } },
            readinessProbe: { httpGet: { path: '/healthz', port: 'http' }, periodSeconds: 5 },
          },
        ],
      },
    },
  ],
  [
    '/api/v1/namespaces/default/services',
    'web',
    {
      metadata: { name: 'web' },
      spec: {
        type: 'LoadBalancer',
        selector: { app: 'web' },
        ports: [{ name: 'http', port: 80, targetPort: 'http' }],
      },
    },
  ],
  [
    '/api/v1/namespaces/default/secrets',
    'tls',
    {
      metadata: { name: 'tls' },
      type: 'Opaque',
      data: { key: Buffer.from([0, 1, 2, 255]).toString('base64') },
    },
  ],
  [
    '/apis/apps/v1/namespaces/default/deployments',
    'web',
    {
      metadata: { name: 'web' },
      spec: {
        replicas: 2,
        selector: { matchLabels: { app: 'web' } },
        template: {
          metadata: { labels: { app: 'web' } },
          spec: { containers: [{ name: 'web', image: 'web:1' }] },
        },
      },
    },
  ],
  [
    '/apis/coordination.k8s.io/v1/namespaces/default/leases',
    'leader',
    {
      metadata: { name: 'leader' },
      spec: { holderIdentity: 'a', leaseDurationSeconds: 15, renewTime: '2026-11-26T06:00:00.123456Z' },
    },
  ],
];

/** A list's items carry no apiVersion and kind in protobuf (its own message says them). */
function withoutItemTypes(v: unknown): unknown {
  const o = v as { items?: Record<string, unknown>[] };
  if (!Array.isArray(o.items)) return v;
  return { ...o, items: o.items.map(({ apiVersion: _a, kind: _k, ...rest }) => rest) };
}

describe('protobuf responses', () => {
  it('objects and lists decode back to the JSON others get', async (t) => {
    const { url } = await useSandbox(t);
    for (const [path, name, body] of OBJECTS) {
      const created = await api(url, 'POST', path, body);
      assert.equal(created.status, 201, JSON.stringify(created.body));
      for (const at of [`${path}/${name}`, path]) {
        const { json, proto, type } = await getBoth(url, at);
        assert.equal(type, KUBE_PROTOBUF, at);
        assert.deepEqual(proto.subarray(0, 4), Buffer.from('k8s\0'), at);
        assert.deepEqual(decodeProtobufBody(proto, openapi, definitionOrList), withoutItemTypes(json), at);
      }
    }
    // A write answered in protobuf too (kubectl create reads it).
    const res = await fetch(`${url}/api/v1/namespaces`, {
      method: 'POST',
      headers: { Accept: CLIENT_GO, 'Content-Type': 'application/json' },
      body: JSON.stringify({ metadata: { name: 'team-a' } }),
    });
    assert.equal(res.status, 201);
    assert.equal(res.headers.get('content-type'), KUBE_PROTOBUF);
  });

  it('JSON when the client does not prefer protobuf, for Tables, custom resources and errors', async (t) => {
    const { url } = await useSandbox(t);
    const ask = async (path: string, accept: string) =>
      (await fetch(url + path, { headers: { Accept: accept } })).headers.get('content-type');
    assert.equal(
      await ask('/api/v1/namespaces/default', 'application/json, application/vnd.kubernetes.protobuf'),
      'application/json',
    );
    assert.equal(
      await ask('/api/v1/namespaces', 'application/json;as=Table;v=v1;g=meta.k8s.io, application/json'),
      'application/json',
    );
    assert.equal(await ask('/api/v1/namespaces/default/pods/nope', CLIENT_GO), 'application/json');
    assert.equal(await installNplLbCrds(url), 2);
    assert.equal(await ask('/apis/npl-lb.io/v1alpha1/backendpolicies', CLIENT_GO), 'application/json');
    assert.equal(prefersProtobuf(undefined), false);
    assert.equal(prefersProtobuf('application/vnd.kubernetes.protobuf;as=Table'), true);
  });
});
