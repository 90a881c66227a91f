/**
 * Kubernetes protobuf bodies decoded against the bundled upstream definitions: objects encoded
 * here with protobufjs from their JSON (the way client-go encodes them) come back as that JSON,
 * the apimachinery types in their own JSON forms (Time, MicroTime, IntOrString, Quantity, FieldsV1,
 * bytes as base64, int64 as numbers), embedded structs inlined as their JSON has them.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import protobuf from 'protobufjs';
import { PROTO_FILES } from '../../../src/sandbox/protobuf-files.ts';
import { OpenApi } from '../../../src/sandbox/openapi.ts';
import { decodeProtobufBody } from '../../../src/sandbox/protobuf.ts';

const openapi = new OpenApi();

const DIR = 'src/sandbox/proto';
const root = new protobuf.Root();
root.resolvePath = (_o, t) => join(DIR, t);
root.loadSync([...PROTO_FILES], { keepCase: true });
root.resolveAll();

/** The body client-go sends: k8s\0, then runtime.Unknown with the object's message in raw. */
function body(apiVersion: string, kind: string, proto: string, obj: object): Buffer {
  const T = root.lookupType(proto);
  const raw = T.encode(T.fromObject(obj)).finish();
  const U = root.lookupType('k8s.io.apimachinery.pkg.runtime.Unknown');
  const u = U.encode(U.fromObject({ typeMeta: { apiVersion, kind }, raw })).finish();
  return Buffer.concat([Buffer.from('k8s\0', 'latin1'), Buffer.from(u)]);
}

describe('Kubernetes protobuf bodies', () => {
  it('a Lease: MicroTime with microseconds, int32, Time without a fraction, managedFields with FieldsV1', () => {
    const fields = { 'f:spec': { 'f:holderIdentity': {} } };
    const got = decodeProtobufBody(
      body('coordination.k8s.io/v1', 'Lease', 'k8s.io.api.coordination.v1.Lease', {
        metadata: {
          name: 'leader',
          namespace: 'kube-system',
          generation: 7,
          creationTimestamp: { seconds: 1767225600 },
          managedFields: [
            {
              manager: 'kubectl',
              operation: 'Apply',
              fieldsType: 'FieldsV1',
              fieldsV1: { Raw: Buffer.from(JSON.stringify(fields)) },
            },
          ],
        },
        spec: {
          holderIdentity: 'a',
          leaseDurationSeconds: 15,
          renewTime: { seconds: 1767225601, nanos: 123456789 },
        },
      }),
      openapi,
    );
    assert.deepEqual(got, {
      apiVersion: 'coordination.k8s.io/v1',
      kind: 'Lease',
      metadata: {
        name: 'leader',
        namespace: 'kube-system',
        generation: 7,
        creationTimestamp: '2026-01-01T00:00:00Z',
        managedFields: [{ manager: 'kubectl', operation: 'Apply', fieldsType: 'FieldsV1', fieldsV1: fields }],
      },
      spec: { holderIdentity: 'a', leaseDurationSeconds: 15, renewTime: '2026-01-01T00:00:01.123456Z' },
    });
  });

  it('a Pod: IntOrString as a number and as a name, Quantity, bytes-free maps, empty lists left out', () => {
    const got = decodeProtobufBody(
      body('v1', 'Pod', 'k8s.io.api.core.v1.Pod', {
        metadata: { name: 'p', labels: { app: 'web' } },
        spec: {
          containers: [
            {
              name: 'c',
              image: 'nginx',
              env: [],
              resources: { limits: { memory: { string: '128Mi' } } },
              // The proto nests the handler; the JSON inlines it.
              readinessProbe: {
                handler: { httpGet: { path: '/healthz', port: { type: 1, strVal: 'http' } } },
              },
              livenessProbe: { handler: { tcpSocket: { port: { type: 0, intVal: 8080 } } } },
            },
          ],
        },
      }),
      openapi,
    ) as { spec: { containers: Record<string, unknown>[] } };
    const c = got.spec.containers[0]!;
    assert.equal('env' in c, false, 'an empty list is not written');
    assert.deepEqual(c.resources, { limits: { memory: '128Mi' } });
    assert.deepEqual(c.readinessProbe, { httpGet: { path: '/healthz', port: 'http' } });
    assert.deepEqual(c.livenessProbe, { tcpSocket: { port: 8080 } });
  });

  it('embedded structs inline and JSON names as the OpenAPI definitions give them', () => {
    const got = decodeProtobufBody(
      body('networking.k8s.io/v1', 'IngressClass', 'k8s.io.api.networking.v1.IngressClass', {
        metadata: { name: 'c' },
        spec: {
          controller: 'x.io/c',
          parameters: { aPIGroup: 'npl-lb.io', kind: 'P', name: 'p', scope: 'Cluster' },
        },
      }),
      openapi,
    );
    assert.deepEqual((got as { spec: unknown }).spec, {
      controller: 'x.io/c',
      parameters: { apiGroup: 'npl-lb.io', kind: 'P', name: 'p', scope: 'Cluster' },
    });
    const ing = decodeProtobufBody(
      body('networking.k8s.io/v1', 'Ingress', 'k8s.io.api.networking.v1.Ingress', {
        metadata: { name: 'i' },
        spec: {
          rules: [
            {
              host: 'a.example',
              ingressRuleValue: {
                http: {
                  paths: [
                    {
                      path: '/',
                      pathType: 'Prefix',
                      backend: { service: { name: 's', port: { number: 80 } } },
                    },
                  ],
                },
              },
            },
          ],
        },
      }),
      openapi,
    ) as { spec: { rules: Record<string, unknown>[] } };
    assert.deepEqual(Object.keys(ing.spec.rules[0]!), ['host', 'http'], 'IngressRuleValue inlined');
  });

  it('every bundled definition is an upstream generated.proto (its license header, proto2)', () => {
    for (const f of PROTO_FILES) {
      const text = readFileSync(join(DIR, f), 'utf8');
      assert.match(text, /^\/\*\n?Copyright The Kubernetes Authors\./, f);
      assert.match(text, /syntax = "proto2";/, f);
    }
  });
});
