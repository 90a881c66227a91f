/**
 * What the sandbox's kubelet makes of a Pod's containers before it runs them (pod-processes.ts):
 * only catalogue images run; the downward API's fields are resolved into the environment; a
 * variable that would steer the Node runtime running the image (NODE_OPTIONS) or a malformed name
 * is dropped; the port comes from the image's variable, else the first container port; a
 * readiness probe's named port is looked up; a mount is kept by name and path; readiness is
 * counted as the kubelet counts it (thresholds in a row).
 */
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { probed, runnableContainers } from '../../../src/sandbox/pod-processes.ts';
import type { JsonObject } from '../../../src/sandbox/openapi.ts';

const pod = (containers: JsonObject[]): JsonObject => ({
  metadata: { name: 'web-abc', namespace: 'shop', uid: 'u1', labels: { app: 'web' } },
  spec: { nodeName: 'n1', containers },
});

it('the catalogue runs; the environment is resolved and bounded; ports and probes are read', () => {
  assert.equal(runnableContainers(pod([{ name: 'x', image: 'example.com/app:1' }])), undefined);
  assert.equal(
    runnableContainers(
      pod([
        { name: 'a', image: 'npl-lb/demo-web:1.0' },
        { name: 'b', image: 'busybox' },
      ]),
    ),
    undefined,
    'one container the catalogue has not: the Pod is simulated',
  );
  const [c] = runnableContainers(
    pod([
      {
        name: 'echo',
        image: 'registry.k8s.io/gateway-api/echo-basic:v1.5.1',
        ports: [{ name: 'web', containerPort: 3000 }],
        readinessProbe: { httpGet: { path: '/healthz', port: 'web' }, periodSeconds: 2 },
        volumeMounts: [{ name: 'certs', mountPath: '/etc/certs' }],
        env: [
          { name: 'POD_NAME', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } },
          { name: 'NAMESPACE', valueFrom: { fieldRef: { fieldPath: 'metadata.namespace' } } },
          { name: 'IP', valueFrom: { fieldRef: { fieldPath: 'status.podIP' } } },
          { name: 'APP', valueFrom: { fieldRef: { fieldPath: "metadata.labels['app']" } } },
          { name: 'NODE_OPTIONS', value: '--require /tmp/evil.js' },
          { name: 'node_path', value: '/tmp' },
          { name: 'BAD NAME', value: 'x' },
          { name: 'GREETING', value: 'hi' },
        ],
      },
    ]),
    ['127.83.9.2'],
  )!;
  assert.deepEqual(c!.env, {
    POD_NAME: 'web-abc',
    NAMESPACE: 'shop',
    IP: '127.83.9.2',
    APP: 'web',
    GREETING: 'hi',
    HTTP_PORT: '3000',
  });
  assert.deepEqual(
    { kind: c!.probe.kind, port: c!.probe.port, path: c!.probe.path, periodMs: c!.probe.periodMs },
    { kind: 'http', port: 3000, path: '/healthz', periodMs: 2000 },
  );
  assert.deepEqual(c!.mounts, [{ name: 'certs', mountPath: '/etc/certs' }]);
  // No probe: a TCP connect to the image's port.
  const [d] = runnableContainers(pod([{ name: 'w', image: 'npl-lb/demo-web' }]))!;
  assert.equal(d!.probe.kind, 'tcp');
  assert.equal(d!.probe.port, 8080);
});

it("readiness counts as the kubelet's: unready after failureThreshold failures in a row, ready after successThreshold", () => {
  const [c] = runnableContainers(
    pod([
      {
        name: 'echo',
        image: 'npl-lb/demo-web',
        readinessProbe: { tcpSocket: { port: 8080 }, failureThreshold: 2, successThreshold: 2 },
      },
    ]),
  )!;
  assert.deepEqual([c!.probe.failureThreshold, c!.probe.successThreshold], [2, 2]);
  const [d] = runnableContainers(pod([{ name: 'w', image: 'npl-lb/demo-web' }]))!;
  assert.deepEqual([d!.probe.failureThreshold, d!.probe.successThreshold], [3, 1], "the kubelet's defaults");
  // A running container (its process stands in as `child`), probed as the results come.
  const state = { child: {} as never, probe: c!.probe, ready: false, fails: 0, oks: 0 };
  const run = (results: boolean[]) =>
    results.map((ok) => {
      probed(state, ok);
      return state.ready;
    });
  assert.deepEqual(run([true, true]), [false, true], 'ready after two answers in a row');
  assert.deepEqual(run([false, true, false]), [true, true, true], 'one lost probe, or two apart, keeps it');
  assert.deepEqual(run([true, false, false]), [true, true, false], 'two in a row take it out');
  assert.deepEqual(run([true, false, true, true]), [false, false, false, true], 'back after two in a row');
  // No process: unready at once, whatever the counts.
  const gone = { ...state, child: undefined };
  probed(gone, true);
  assert.deepEqual([gone.ready, gone.fails, gone.oks], [false, 0, 0]);
});
