/**
 * The real kubectl v1.35 against the sandbox's CustomResourceDefinitions: the Gateway API v1.6.1
 * standard-channel install and the upstream conformance base manifests (both bundled in
 * src/sandbox/gateway-api), then custom resources served like built-in kinds.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import { ensureKubeTools } from '../support/kube-tools.ts';
import { api, type TestSandbox, useSandbox } from '../support/sandbox.ts';

const run = promisify(execFile);
const SPECS = new URL('../support/specs/gateway-api/', import.meta.url);
const INSTALL = new URL('../../src/sandbox/gateway-api/standard-install-v1.6.1.yaml', import.meta.url)
  .pathname;
const CONFORMANCE = new URL('conformance-base-manifests-v1.6.1.yaml', SPECS).pathname;

const ROUTE = (path: string, name = 'web'): string => `
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: ${name}, namespace: gateway-conformance-infra}
spec:
  parentRefs: [{name: same-namespace}]
  hostnames: [web.example.com]
  rules:
  - matches: [{path: {type: PathPrefix, value: "${path}"}}]
    backendRefs: [{name: infra-backend-v1, port: 8080}]
`;

const CLASS = `
apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata: {name: npl-lb}
spec: {controllerName: npl-lb.io/gateway-controller}
`;

type K = (...a: string[]) => Promise<{ out: string; code: number }>;

describe('kubectl v1.35 with the Gateway API CRDs', () => {
  let kubectl = '';
  before(() => {
    kubectl = ensureKubeTools().kubectl;
  });

  async function setup(
    t: Parameters<typeof useSandbox>[0],
  ): Promise<TestSandbox & { k: K; file: (text: string) => string }> {
    const sb = await useSandbox(t);
    const k: K = async (...args) => {
      try {
        const { stdout, stderr } = await run(kubectl, args, {
          env: { ...process.env, KUBECONFIG: sb.kubeconfigPath, HOME: sb.dir },
          timeout: 60_000,
          maxBuffer: 32 * 1024 * 1024,
        });
        return { out: stdout + stderr, code: 0 };
      } catch (err) {
        const e = err as { stdout?: string; stderr?: string; code?: number };
        return { out: (e.stdout ?? '') + (e.stderr ?? ''), code: typeof e.code === 'number' ? e.code : 1 };
      }
    };
    let n = 0;
    const file = (text: string): string => {
      const p = join(sb.dir, `m${n++}.yaml`);
      writeFileSync(p, text);
      return p;
    };
    return { ...sb, k, file };
  }

  async function installed(t: Parameters<typeof useSandbox>[0]) {
    const s = await setup(t);
    const first = await s.k('apply', '-f', INSTALL);
    assert.equal(first.code, 0, first.out);
    return s;
  }

  /** The CRDs installed and the conformance base manifests applied (class name filled in). */
  async function withConformance(t: Parameters<typeof useSandbox>[0]) {
    const s = await installed(t);
    const manifests = readFileSync(CONFORMANCE, 'utf8').replaceAll('{GATEWAY_CLASS_NAME}', 'npl-lb');
    const applied = await s.k('apply', '-f', s.file(manifests));
    assert.equal(applied.code, 0, applied.out);
    return { ...s, applied: applied.out };
  }

  it('applies the standard install (CRDs and the admission policy binding), and again unchanged', async (t) => {
    const { k, url } = await installed(t);
    const again = await k('apply', '-f', INSTALL);
    assert.equal(again.code, 0, again.out);
    for (const crd of [
      'gatewayclasses',
      'gateways',
      'httproutes',
      'grpcroutes',
      'referencegrants',
      'tlsroutes',
      'tcproutes',
      'udproutes',
      'backendtlspolicies',
      'listenersets',
    ])
      assert.match(
        again.out,
        new RegExp(
          `customresourcedefinition.apiextensions.k8s.io/${crd}.gateway.networking.k8s.io unchanged`,
        ),
      );
    assert.match(
      again.out,
      /validatingadmissionpolicybinding.admissionregistration.k8s.io\/safe-upgrades.gateway.networking.k8s.io unchanged/,
    );
    const crd = await api(
      url,
      'GET',
      '/apis/apiextensions.k8s.io/v1/customresourcedefinitions/gateways.gateway.networking.k8s.io',
    );
    const status = crd.body.status as {
      conditions: { type: string; status: string }[];
      acceptedNames: { kind: string };
    };
    assert.deepEqual(
      status.conditions.map((c) => `${c.type}=${c.status}`),
      ['NamesAccepted=True', 'Established=True'],
    );
    assert.equal(status.acceptedNames.kind, 'Gateway');
    // Discovery: the group prefers its storage version; short names resolve.
    const group = await api(url, 'GET', '/apis/gateway.networking.k8s.io');
    assert.equal((group.body.preferredVersion as { version: string }).version, 'v1');
    const shorts = await k('api-resources', '--api-group=gateway.networking.k8s.io');
    assert.match(shorts.out, /gateways\s+gtw\s+gateway.networking.k8s.io\/v1\s+true\s+Gateway/);
  });

  it("applies the conformance base manifests; get prints the CRDs' columns; status and defaults as on a real server", async (t) => {
    const { k, file, url, applied } = await withConformance(t);
    assert.match(applied, /gateway.gateway.networking.k8s.io\/same-namespace created/);
    assert.equal((await k('apply', '-f', file(CLASS + '---' + ROUTE('/app')))).code, 0);
    const got = await k('get', 'gateways,httproutes', '-A');
    assert.match(got.out, /NAMESPACE\s+NAME\s+CLASS\s+ADDRESS\s+PROGRAMMED\s+AGE/);
    assert.match(
      got.out,
      /gateway-conformance-infra\s+gateway.gateway.networking.k8s.io\/same-namespace\s+npl-lb\s+Unknown\s+\d+s/,
    );
    assert.match(got.out, /NAMESPACE\s+NAME\s+HOSTNAMES\s+AGE/);
    assert.match(got.out, /httproute.gateway.networking.k8s.io\/web\s+\["web.example.com"\]/);
    // The schema's defaults: a new Gateway's status says Pending; a route's parentRef and backendRef are filled in.
    const route = await api(
      url,
      'GET',
      '/apis/gateway.networking.k8s.io/v1/namespaces/gateway-conformance-infra/httproutes/web',
    );
    const spec = route.body.spec as { parentRefs: object[]; rules: { backendRefs: object[] }[] };
    assert.deepEqual(spec.parentRefs[0], {
      group: 'gateway.networking.k8s.io',
      kind: 'Gateway',
      name: 'same-namespace',
    });
    assert.deepEqual(spec.rules[0]!.backendRefs[0], {
      group: '',
      kind: 'Service',
      name: 'infra-backend-v1',
      port: 8080,
      weight: 1,
    });
    // The status subresource: the main endpoint ignores status, the status endpoint takes it; the printer column shows it.
    const gwPath =
      '/apis/gateway.networking.k8s.io/v1/namespaces/gateway-conformance-infra/gateways/same-namespace';
    const programmed = {
      status: {
        conditions: [
          {
            type: 'Programmed',
            status: 'True',
            reason: 'Programmed',
            message: '',
            lastTransitionTime: '2026-01-01T00:00:00Z',
          },
        ],
        addresses: [{ type: 'IPAddress', value: '192.0.2.10' }],
      },
    };
    const ignored = await api(url, 'PATCH', gwPath, programmed, {
      'Content-Type': 'application/merge-patch+json',
    });
    assert.equal(ignored.status, 200);
    assert.equal(
      (ignored.body.status as { conditions: { reason: string }[] }).conditions[0]!.reason,
      'Pending',
    );
    const patched = await k(
      'patch',
      'gateway',
      'same-namespace',
      '-n',
      'gateway-conformance-infra',
      '--subresource=status',
      '--type=merge',
      '-p',
      JSON.stringify(programmed),
    );
    assert.equal(patched.code, 0, patched.out);
    const row = await k('get', 'gtw', 'same-namespace', '-n', 'gateway-conformance-infra');
    assert.match(row.out, /same-namespace\s+npl-lb\s+192.0.2.10\s+True/);
    // Another served version is a view of the same object.
    const beta = await api(
      url,
      'GET',
      '/apis/gateway.networking.k8s.io/v1beta1/namespaces/gateway-conformance-infra/httproutes/web',
    );
    assert.equal(beta.status, 200);
    assert.equal(beta.body.apiVersion, 'gateway.networking.k8s.io/v1beta1');
  });

  it('refuses what the CRD forbids, with the real messages: CEL rules, schema, unknown fields, immutability, strategic merge', async (t) => {
    const { k, file } = await withConformance(t);
    const cel = await k('apply', '-f', file(ROUTE('app', 'bad')));
    assert.notEqual(cel.code, 0);
    assert.match(
      cel.out,
      /The HTTPRoute "bad" is invalid: spec.rules\[0\].matches\[0\].path: Invalid value: "object": value must be an absolute path and start with '\/' when type one of \['Exact', 'PathPrefix'\]/,
    );
    const gw = await k(
      'apply',
      '-f',
      file(`
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: bad, namespace: default}
spec:
  gatewayClassName: npl-lb
  listeners:
  - {name: a, port: 0, protocol: HTTPS, hostname: "Foo_bar"}
  - {name: b, port: 443, protocol: TLS, tls: {mode: Terminate}}
  - {name: b, port: 444, protocol: TCP}
`),
    );
    assert.notEqual(gw.code, 0);
    assert.match(
      gw.out,
      /spec.listeners\[0\].port: Invalid value: 0: spec.listeners\[0\].port in body should be greater than or equal to 1/,
    );
    assert.match(
      gw.out,
      /spec.listeners\[0\].hostname: Invalid value: "Foo_bar": spec.listeners\[0\].hostname in body should match/,
    );
    assert.match(
      gw.out,
      /spec.listeners\[1\].tls: Invalid value: "object": certificateRefs or options must be specified when mode is Terminate/,
    );
    assert.match(gw.out, /spec.listeners\[2\]: Duplicate value: map\[string\]interface \{\}\{"name":"b"\}/);
    const typed = await k(
      'apply',
      '-f',
      file(`
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: typed, namespace: default}
spec: {gatewayClassName: npl-lb, listeners: [{name: a, port: "eighty", protocol: HTTP}]}
`),
    );
    assert.match(
      typed.out,
      /spec.listeners\[0\].port: Invalid value: "string": spec.listeners\[0\].port in body must be of type integer: "string"/,
    );
    assert.match(typed.out, /some validation rules were not checked because the object was invalid/);
    const unknown = await k(
      'apply',
      '-f',
      file(`
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: extra, namespace: default}
spec: {gatewayClassName: npl-lb, foo: bar, listeners: [{name: a, port: 80, protocol: HTTP}]}
`),
    );
    assert.match(unknown.out, /strict decoding error: unknown field "spec.foo"/);
    assert.equal((await k('apply', '-f', file(CLASS))).code, 0);
    const immutable = await k(
      'patch',
      'gatewayclass',
      'npl-lb',
      '--type=merge',
      '-p',
      '{"spec":{"controllerName":"example.com/other"}}',
    );
    assert.match(
      immutable.out,
      /The GatewayClass "npl-lb" is invalid: spec.controllerName: Invalid value: "string": Value is immutable/,
    );
    const smp = await k('patch', 'gatewayclass', 'npl-lb', '-p', '{"spec":{"description":"x"}}');
    assert.match(
      smp.out,
      /application\/strategic-merge-patch\+json is not supported by gateway.networking.k8s.io\/v1, Kind=GatewayClass/,
    );
  });

  it('deleting a CRD deletes its objects and stops serving the kind', async (t) => {
    const { k, file, url } = await withConformance(t);
    assert.equal((await k('apply', '-f', file(ROUTE('/a')))).code, 0);
    const del = await k('delete', 'crd', 'httproutes.gateway.networking.k8s.io');
    assert.equal(del.code, 0, del.out);
    const gone = await api(url, 'GET', '/apis/gateway.networking.k8s.io/v1/httproutes');
    assert.equal(gone.status, 404);
    // Installed again, the kind is empty: nothing of the old objects came back.
    assert.equal((await k('apply', '-f', INSTALL)).code, 0);
    const empty = await api(url, 'GET', '/apis/gateway.networking.k8s.io/v1/httproutes');
    assert.deepEqual(empty.body.items, []);
    assert.equal((await api(url, 'GET', '/apis/gateway.networking.k8s.io/v1/gateways')).status, 200);
  });

  it("kind: List files (what kubectl get -o yaml writes) pass kubectl's validation, which reads the OpenAPI v2 protobuf", async (t) => {
    const { k, file } = await withConformance(t);
    const services = await k('get', 'services,gateways', '-n', 'gateway-conformance-infra', '-o', 'yaml');
    assert.match(services.out, /^apiVersion: v1\nitems:/);
    const again = await k('apply', '-f', file(services.out));
    assert.equal(again.code, 0, again.out);
    assert.match(again.out, /service\/infra-backend-v1 (configured|unchanged)/);
    assert.match(again.out, /gateway.gateway.networking.k8s.io\/same-namespace (configured|unchanged)/);
    // The client-side validation is real: an item with an unknown field or a wrong type is refused before anything is sent.
    const bad = await k(
      'apply',
      '-f',
      file(`
apiVersion: v1
kind: List
items:
- {apiVersion: v1, kind: ConfigMap, metadata: {name: good, namespace: default}, data: {a: b}}
- apiVersion: v1
  kind: Service
  metadata: {name: bad, namespace: default}
  spec: {bogusField: 1, ports: [{port: "eighty"}]}
`),
    );
    assert.notEqual(bad.code, 0);
    assert.match(bad.out, /unknown field "bogusField" in io.k8s.api.core.v1.ServiceSpec/);
    assert.match(
      bad.out,
      /invalid type for io.k8s.api.core.v1.ServicePort.port: got "string", expected "integer"/,
    );
    assert.match((await k('get', 'configmap', 'good')).out, /NotFound|not found/);
  });

  it('--validate=false: a custom resource keeps no unknown field (pruned, as a real server prunes); --sort-by and field selectors as on a real server', async (t) => {
    const { k, file, url } = await installed(t);
    const withUnknown = `
apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata: {name: pruned}
spec: {controllerName: example.com/x, madeUp: {deep: 1}}
`;
    // Validation on (kubectl's default, Strict): refused, naming the field.
    const strict = await k('apply', '-f', file(withUnknown));
    assert.notEqual(strict.code, 0);
    assert.match(strict.out, /madeUp/);
    const loose = await k('apply', '--validate=false', '-f', file(withUnknown));
    assert.equal(loose.code, 0, loose.out);
    const stored = await k('get', 'gatewayclass', 'pruned', '-o', 'json');
    const spec = (JSON.parse(stored.out) as { spec: Record<string, unknown> }).spec;
    assert.deepEqual(Object.keys(spec).sort(), ['controllerName'], 'the unknown field is pruned, not kept');

    // Events sorted by lastTimestamp, and a field selector on them.
    for (const [name, at] of [
      ['late', '2026-11-26T06:00:03Z'],
      ['early', '2026-11-26T06:00:01Z'],
      ['middle', '2026-11-26T06:00:02Z'],
    ] as const)
      await api(url, 'POST', '/api/v1/namespaces/default/events', {
        metadata: { name },
        involvedObject: { kind: 'Service', namespace: 'default', name: 'web' },
        reason: name === 'late' ? 'Late' : 'Other',
        message: name,
        type: 'Normal',
        firstTimestamp: at,
        lastTimestamp: at,
        count: 1,
      });
    const sorted = await k(
      'get',
      'events',
      '-n',
      'default',
      '--sort-by=.lastTimestamp',
      '-o',
      'custom-columns=NAME:.metadata.name',
      '--no-headers',
    );
    assert.equal(sorted.code, 0, sorted.out);
    assert.deepEqual(sorted.out.trim().split('\n'), ['early', 'middle', 'late']);
    const selected = await k(
      'get',
      'events',
      '-n',
      'default',
      '--field-selector',
      'reason=Late',
      '-o',
      'name',
    );
    assert.equal(selected.out.trim(), 'event/late');
  });
});
