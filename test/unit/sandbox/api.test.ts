/**
 * The sandbox over HTTP: verbs, status subresource rules, finalizers, validation and bad input,
 * each answered with the real server's status code, reason and message.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { describe, it } from 'node:test';
import { api, useSandbox } from '../../support/sandbox.ts';

const POD = (name: string, extra: Record<string, unknown> = {}) => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name, labels: { app: 'web' }, ...extra },
  spec: {
    nodeName: 'n1',
    containers: [{ name: 'web', image: 'nginx:1.27', ports: [{ containerPort: 8080 }] }],
  },
});
const PODS = '/api/v1/namespaces/default/pods';

describe('sandbox API: verbs', () => {
  it('create fills uid, creationTimestamp, generation, resourceVersion and defaults; 201', async (t) => {
    const { url } = await useSandbox(t);
    const r = await api(url, 'POST', PODS, POD('p1'));
    assert.equal(r.status, 201);
    const meta = r.body.metadata as Record<string, unknown>;
    assert.match(String(meta.uid), /^[0-9a-f-]{36}$/);
    assert.match(String(meta.creationTimestamp), /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    assert.equal(meta.generation, 1);
    assert.match(String(meta.resourceVersion), /^\d+$/);
    const spec = r.body.spec as { restartPolicy: string; containers: { ports: { protocol: string }[] }[] };
    assert.equal(spec.restartPolicy, 'Always');
    assert.equal(spec.containers[0]!.ports[0]!.protocol, 'TCP');
    assert.deepEqual(r.body.status, { phase: 'Pending', qosClass: 'BestEffort' });
  });

  it('generateName gives a unique name; a second create of the same name is 409 AlreadyExists', async (t) => {
    const { url } = await useSandbox(t);
    const g = await api(url, 'POST', PODS, { ...POD(''), metadata: { generateName: 'web-' } });
    assert.equal(g.status, 201);
    assert.match(String((g.body.metadata as { name: string }).name), /^web-[a-z0-9]{5}$/);
    await api(url, 'POST', PODS, POD('dup'));
    const again = await api(url, 'POST', PODS, POD('dup'));
    assert.equal(again.status, 409);
    assert.equal(again.body.reason, 'AlreadyExists');
    assert.equal(again.body.message, 'pods "dup" already exists');
  });

  it('a namespaced create in a missing namespace is 404 namespaces "x" not found', async (t) => {
    const { url } = await useSandbox(t);
    const r = await api(url, 'POST', '/api/v1/namespaces/nope/pods', POD('p'));
    assert.equal(r.status, 404);
    assert.equal(r.body.message, 'namespaces "nope" not found');
    assert.deepEqual(r.body.details, { name: 'nope', kind: 'namespaces' });
  });

  it('default, kube-system and kube-public exist at start', async (t) => {
    const { url } = await useSandbox(t);
    const r = await api(url, 'GET', '/api/v1/namespaces');
    const names = (r.body.items as { metadata: { name: string } }[]).map((n) => n.metadata.name);
    for (const n of ['default', 'kube-system', 'kube-public']) assert.ok(names.includes(n), n);
  });

  it('update with a stale resourceVersion is 409 Conflict; a fresh one bumps it; a no-op keeps it', async (t) => {
    const { url } = await useSandbox(t);
    const created = (await api(url, 'POST', PODS, POD('p'))).body;
    const rv = (created.metadata as { resourceVersion: string }).resourceVersion;
    const changed = structuredClone(created) as { metadata: { labels: Record<string, string> } };
    changed.metadata.labels.x = 'y';
    const ok = await api(url, 'PUT', `${PODS}/p`, changed);
    assert.equal(ok.status, 200);
    const rv2 = (ok.body.metadata as { resourceVersion: string }).resourceVersion;
    assert.ok(Number(rv2) > Number(rv));
    const stale = await api(url, 'PUT', `${PODS}/p`, changed);
    assert.equal(stale.status, 409);
    assert.equal(stale.body.reason, 'Conflict');
    assert.match(
      String(stale.body.message),
      /Operation cannot be fulfilled on pods "p": the object has been modified/,
    );
    const same = await api(url, 'PUT', `${PODS}/p`, ok.body);
    assert.equal((same.body.metadata as { resourceVersion: string }).resourceVersion, rv2);
  });

  it('the main resource ignores status; the status subresource ignores spec but takes annotations', async (t) => {
    const { url } = await useSandbox(t);
    await api(url, 'POST', PODS, POD('p'));
    const main = await api(
      url,
      'PATCH',
      `${PODS}/p`,
      { status: { podIP: '10.1.1.1' }, metadata: { labels: { m: '1' } } },
      {
        'Content-Type': 'application/merge-patch+json',
      },
    );
    assert.equal((main.body.status as { podIP?: string }).podIP, undefined);
    assert.equal((main.body.metadata as { labels: Record<string, string> }).labels.m, '1');
    const st = await api(
      url,
      'PATCH',
      `${PODS}/p/status`,
      {
        status: { podIP: '10.1.1.1', phase: 'Running' },
        spec: { nodeName: 'other' },
        metadata: { annotations: { 'nodeportlocal.antrea.io': '[]' } },
      },
      { 'Content-Type': 'application/merge-patch+json' },
    );
    assert.equal(st.status, 200);
    assert.equal((st.body.status as { podIP: string }).podIP, '10.1.1.1');
    assert.equal((st.body.spec as { nodeName: string }).nodeName, 'n1');
    assert.equal(
      (st.body.metadata as { annotations: Record<string, string> }).annotations['nodeportlocal.antrea.io'],
      '[]',
    );
    assert.equal((st.body.metadata as { generation: number }).generation, 1);
  });

  it('spec changes bump generation; pod spec fields other than image are immutable (422)', async (t) => {
    const { url } = await useSandbox(t);
    await api(url, 'POST', PODS, POD('p'));
    const smp = { 'Content-Type': 'application/strategic-merge-patch+json' };
    const img = await api(
      url,
      'PATCH',
      `${PODS}/p`,
      { spec: { containers: [{ name: 'web', image: 'nginx:2' }] } },
      smp,
    );
    assert.equal(img.status, 200);
    assert.equal((img.body.metadata as { generation: number }).generation, 2);
    const bad = await api(url, 'PATCH', `${PODS}/p`, { spec: { nodeName: 'n2' } }, smp);
    assert.equal(bad.status, 422);
    assert.equal(bad.body.reason, 'Invalid');
  });

  it('delete with finalizers holds deletionTimestamp (202) until they are removed', async (t) => {
    const { url } = await useSandbox(t);
    await api(url, 'POST', PODS, POD('p', { finalizers: ['example.com/hold'] }));
    const d = await api(url, 'DELETE', `${PODS}/p`);
    assert.equal(d.status, 202);
    assert.ok((d.body.metadata as { deletionTimestamp?: string }).deletionTimestamp);
    assert.equal((await api(url, 'GET', `${PODS}/p`)).status, 200);
    const rm = await api(
      url,
      'PATCH',
      `${PODS}/p`,
      { metadata: { finalizers: null } },
      {
        'Content-Type': 'application/merge-patch+json',
      },
    );
    assert.equal(rm.status, 200);
    assert.equal((await api(url, 'GET', `${PODS}/p`)).status, 404);
  });

  it('delete preconditions on uid and resourceVersion give 409', async (t) => {
    const { url } = await useSandbox(t);
    await api(url, 'POST', PODS, POD('p'));
    const r = await api(url, 'DELETE', `${PODS}/p`, { preconditions: { uid: 'not-it' } });
    assert.equal(r.status, 409);
    assert.match(String(r.body.message), /Precondition failed: UID in precondition: not-it/);
    assert.equal((await api(url, 'DELETE', `${PODS}/p`)).status, 200);
    const gone = await api(url, 'GET', `${PODS}/p`);
    assert.equal(gone.status, 404);
    assert.equal(gone.body.message, 'pods "p" not found');
  });

  it('services get a cluster IP, node ports for LoadBalancer, targetPort defaulted; grouped kinds are qualified', async (t) => {
    const { url } = await useSandbox(t);
    const r = await api(url, 'POST', '/api/v1/namespaces/default/services', {
      metadata: { name: 'lb' },
      spec: { type: 'LoadBalancer', selector: { app: 'web' }, ports: [{ port: 80 }] },
    });
    assert.equal(r.status, 201);
    const spec = r.body.spec as {
      clusterIP: string;
      ports: { targetPort: number; nodePort: number; protocol: string }[];
    };
    assert.match(spec.clusterIP, /^10\.96\.\d+\.\d+$/);
    assert.equal(spec.ports[0]!.targetPort, 80);
    assert.ok(spec.ports[0]!.nodePort >= 30000 && spec.ports[0]!.nodePort <= 32767);
    const nf = await api(url, 'GET', '/apis/networking.k8s.io/v1/namespaces/default/ingresses/none');
    assert.equal(nf.body.message, 'ingresses.networking.k8s.io "none" not found');
  });

  it('namespace delete removes its contents, then the namespace', async (t) => {
    const { url } = await useSandbox(t);
    await api(url, 'POST', '/api/v1/namespaces', { metadata: { name: 'tmp' } });
    await api(url, 'POST', '/api/v1/namespaces/tmp/pods', POD('p'));
    await api(url, 'DELETE', '/api/v1/namespaces/tmp');
    assert.equal((await api(url, 'GET', '/api/v1/namespaces/tmp/pods/p')).status, 404);
    assert.equal((await api(url, 'GET', '/api/v1/namespaces/tmp')).status, 404);
  });

  it('core and events.k8s.io Events are one object in two shapes', async (t) => {
    const { url } = await useSandbox(t);
    const r = await api(url, 'POST', '/apis/events.k8s.io/v1/namespaces/default/events', {
      metadata: { name: 'e1' },
      eventTime: '2026-01-01T00:00:00.000000Z',
      reportingController: 'npl-lb.io/agent',
      reportingInstance: 'n1',
      action: 'Allocate',
      reason: 'NoPortAvailable',
      note: 'port range exhausted',
      type: 'Warning',
      regarding: { kind: 'Pod', namespace: 'default', name: 'p1', uid: 'u1' },
    });
    assert.equal(r.status, 201, JSON.stringify(r.body));
    const core = await api(
      url,
      'GET',
      '/api/v1/namespaces/default/events?fieldSelector=involvedObject.name=p1',
    );
    const items = core.body.items as { message: string; involvedObject: { kind: string } }[];
    assert.equal(items.length, 1);
    assert.equal(items[0]!.message, 'port range exhausted');
    assert.equal(items[0]!.involvedObject.kind, 'Pod');
  });
});

describe('sandbox API: every served kind', () => {
  it('creates, gets, lists and deletes each kind, with status subresources where the real server has them', async (t) => {
    const { url } = await useSandbox(t);
    const kinds: [string, Record<string, unknown>, boolean][] = [
      [
        '/api/v1/nodes',
        { metadata: { name: 'n1' }, status: { addresses: [{ type: 'InternalIP', address: '10.0.0.1' }] } },
        true,
      ],
      ['/api/v1/namespaces', { metadata: { name: 'extra' } }, true],
      ['/api/v1/namespaces/default/pods', POD('k1'), true],
      [
        '/api/v1/namespaces/default/services',
        { metadata: { name: 'k1' }, spec: { ports: [{ port: 80 }] } },
        true,
      ],
      [
        '/api/v1/namespaces/default/endpoints',
        { metadata: { name: 'k1' }, subsets: [{ addresses: [{ ip: '10.0.0.5' }], ports: [{ port: 80 }] }] },
        false,
      ],
      [
        '/api/v1/namespaces/default/events',
        {
          metadata: { name: 'k1.1' },
          involvedObject: { kind: 'Pod', name: 'k1', namespace: 'default' },
          reason: 'R',
          message: 'm',
        },
        false,
      ],
      [
        '/apis/discovery.k8s.io/v1/namespaces/default/endpointslices',
        { metadata: { name: 'k1-abc' }, addressType: 'IPv4', endpoints: [{ addresses: ['10.0.0.5'] }] },
        false,
      ],
      [
        '/apis/networking.k8s.io/v1/ingressclasses',
        { metadata: { name: 'k1' }, spec: { controller: 'example.com/x' } },
        false,
      ],
      [
        '/apis/networking.k8s.io/v1/namespaces/default/ingresses',
        {
          metadata: { name: 'k1' },
          spec: { defaultBackend: { service: { name: 'k1', port: { number: 80 } } } },
        },
        true,
      ],
      [
        '/apis/coordination.k8s.io/v1/namespaces/default/leases',
        { metadata: { name: 'k1' }, spec: { holderIdentity: 'a' } },
        false,
      ],
    ];
    for (const [path, body, hasStatus] of kinds) {
      const created = await api(url, 'POST', path, body);
      assert.equal(created.status, 201, `${path}: ${JSON.stringify(created.body).slice(0, 200)}`);
      const name = (created.body.metadata as { name: string }).name;
      assert.equal((await api(url, 'GET', `${path}/${name}`)).status, 200, path);
      const list = await api(url, 'GET', path);
      assert.ok(
        (list.body.items as { metadata: { name: string } }[]).some((i) => i.metadata.name === name),
        path,
      );
      const status = await api(url, 'GET', `${path}/${name}/status`);
      assert.equal(status.status, hasStatus ? 200 : 404, `${path}/status`);
      const del = await api(url, 'DELETE', `${path}/${name}`);
      assert.ok([200, 202].includes(del.status), path);
    }
    const slice = await api(url, 'POST', '/apis/discovery.k8s.io/v1/namespaces/default/endpointslices', {
      metadata: { name: 'bad' },
      endpoints: [],
    });
    assert.equal(slice.status, 422, 'addressType is required');
  });
});

describe('sandbox API: bad input keeps the server serving', () => {
  it('answers each with the right 4xx Status', async (t) => {
    const { url } = await useSandbox(t);
    const cases: [string, Promise<{ status: number; body: Record<string, unknown> }>, number, string][] = [
      ['malformed JSON', api(url, 'POST', PODS, '{"metadata": {'), 400, 'BadRequest'],
      [
        'wrong content type',
        api(url, 'POST', PODS, 'x', { 'Content-Type': 'text/plain' }),
        415,
        'UnsupportedMediaType',
      ],
      [
        'wrong patch type',
        api(url, 'PATCH', `${PODS}/x`, '{}', { 'Content-Type': 'application/json' }),
        415,
        'UnsupportedMediaType',
      ],
      [
        'oversized body',
        api(url, 'POST', PODS, JSON.stringify({ pad: 'x'.repeat(3 * 1024 * 1024 + 10) })),
        413,
        'RequestEntityTooLarge',
      ],
      ['invalid name', api(url, 'POST', PODS, POD('Bad_Name')), 422, 'Invalid'],
      ['invalid label', api(url, 'POST', PODS, POD('ok', { labels: { 'bad key': 'v' } })), 422, 'Invalid'],
      [
        'invalid label value',
        api(url, 'POST', PODS, POD('ok', { labels: { ok: 'bad value!' } })),
        422,
        'Invalid',
      ],
      [
        'invalid annotation key',
        api(url, 'POST', PODS, POD('ok', { annotations: { '-bad/': 'v' } })),
        422,
        'Invalid',
      ],
      [
        'invalid namespace name',
        api(url, 'POST', '/api/v1/namespaces', { metadata: { name: 'Bad.NS' } }),
        422,
        'Invalid',
      ],
      [
        'invalid label selector',
        api(url, 'GET', `${PODS}?labelSelector=${encodeURIComponent('a in (b')}`),
        400,
        'BadRequest',
      ],
      ['unsupported field selector', api(url, 'GET', `${PODS}?fieldSelector=spec.foo=x`), 400, 'BadRequest'],
      ['kind mismatch', api(url, 'POST', PODS, { ...POD('k'), kind: 'Service' }), 400, 'BadRequest'],
      [
        'apiVersion mismatch',
        api(url, 'POST', PODS, { ...POD('k'), apiVersion: 'apps/v1' }),
        400,
        'BadRequest',
      ],
      [
        'unknown field, strict',
        api(url, 'POST', `${PODS}?fieldValidation=Strict`, { ...POD('k'), bogus: 1 }),
        400,
        'BadRequest',
      ],
      [
        'wrong JSON type',
        api(url, 'POST', PODS, { ...POD('k'), spec: { containers: 'x' } }),
        400,
        'BadRequest',
      ],
      ['missing containers', api(url, 'POST', PODS, { metadata: { name: 'k' }, spec: {} }), 422, 'Invalid'],
      [
        'missing service ports',
        api(url, 'POST', '/api/v1/namespaces/default/services', { metadata: { name: 's' }, spec: {} }),
        422,
        'Invalid',
      ],
      ['PUT on a collection', api(url, 'PUT', PODS, POD('x')), 405, 'MethodNotAllowed'],
      ['unknown resource', api(url, 'GET', '/api/v1/widgets'), 404, 'NotFound'],
    ];
    for (const [what, p, code, reason] of cases) {
      const r = await p;
      assert.equal(r.status, code, `${what}: ${JSON.stringify(r.body).slice(0, 300)}`);
      assert.equal(r.body.kind, 'Status', what);
      assert.equal(r.body.reason, reason, what);
      assert.equal(r.body.code, code, what);
    }
    const health = await fetch(`${url}/healthz`);
    assert.equal(await health.text(), 'ok');
    assert.equal((await api(url, 'POST', PODS, POD('after'))).status, 201);
  });

  it('names the failing fields in Invalid causes, as kubectl shows them', async (t) => {
    const { url } = await useSandbox(t);
    const r = await api(url, 'POST', '/api/v1/namespaces/default/services', {
      metadata: { name: '9bad' },
      spec: { ports: [{ port: 70000 }] },
    });
    assert.equal(r.status, 422);
    const causes = (r.body.details as { causes: { field: string; reason: string }[] }).causes;
    assert.deepEqual(
      causes.map((c) => c.field),
      // targetPort defaults to port before validation, so it is named too, as the real server does.
      ['metadata.name', 'spec.ports[0].port', 'spec.ports[0].targetPort'],
    );
    assert.match(
      String(r.body.message),
      /^Service "9bad" is invalid: \[metadata.name: Invalid value: "9bad": a DNS-1035 label/,
    );
  });

  it('a PATCH or PUT is answered with when its write began (Npl-Write-Started), a bad one without it', async (t) => {
    const { url } = await useSandbox(t);
    await api(url, 'POST', PODS, POD('s'));
    const before = performance.timeOrigin + performance.now();
    const merge = { 'Content-Type': 'application/merge-patch+json' };
    const r = await api(url, 'PATCH', `${PODS}/s`, { metadata: { labels: { a: '1' } } }, merge);
    const after = performance.timeOrigin + performance.now();
    assert.equal(r.status, 200);
    const started = Number(r.headers.get('npl-write-started'));
    assert.ok(started >= before - 1 && started <= after + 1, `${started} within ${before}..${after}`);
    const put = await api(url, 'PUT', `${PODS}/s`, r.body);
    assert.ok(Number(put.headers.get('npl-write-started')) >= started, 'a later write, a later stamp');
    const bad = await api(url, 'PATCH', `${PODS}/s`, { spec: { nodeName: 'n9' } }, merge);
    assert.equal(bad.status, 422);
    assert.equal(bad.headers.get('npl-write-started'), null, 'a refused write has no stamp');
  });

  it('unknown fields are dropped, with a Warning header by default', async (t) => {
    const { url } = await useSandbox(t);
    const r = await api(url, 'POST', PODS, { ...POD('w'), bogus: 1 });
    assert.equal(r.status, 201);
    assert.equal(r.body.bogus, undefined);
    assert.match(String(r.headers.get('warning')), /unknown field \\"bogus\\"/);
  });

  it('Lease renewTime must carry microseconds (MicroTime), as the real decoder insists', async (t) => {
    const { url } = await useSandbox(t);
    const path = '/apis/coordination.k8s.io/v1/namespaces/default/leases';
    const ms = await api(url, 'POST', path, {
      metadata: { name: 'l1' },
      spec: { renewTime: '2026-01-01T00:00:00.123Z' },
    });
    assert.equal(ms.status, 400);
    const us = await api(url, 'POST', path, {
      metadata: { name: 'l1' },
      spec: { renewTime: '2026-01-01T00:00:00.123456Z' },
    });
    assert.equal(us.status, 201);
  });
});

describe('sandbox API: discovery and OpenAPI', () => {
  it('serves /version, /api, /apis, group versions and OpenAPI v3 with fieldValidation on patch', async (t) => {
    const { url } = await useSandbox(t);
    assert.equal((await api(url, 'GET', '/version')).body.minor, '35');
    assert.deepEqual((await api(url, 'GET', '/api')).body.versions, ['v1']);
    const groups = ((await api(url, 'GET', '/apis')).body.groups as { name: string }[]).map((g) => g.name);
    assert.deepEqual(groups.sort(), [
      'admissionregistration.k8s.io',
      'apiextensions.k8s.io',
      'apps',
      'batch',
      'coordination.k8s.io',
      'discovery.k8s.io',
      'events.k8s.io',
      'networking.k8s.io',
      'policy',
      'rbac.authorization.k8s.io',
    ]);
    const core = (await api(url, 'GET', '/api/v1')).body.resources as { name: string }[];
    for (const r of [
      'pods',
      'pods/status',
      'services',
      'services/status',
      'nodes',
      'nodes/status',
      'namespaces',
      'endpoints',
      'events',
    ]) {
      assert.ok(
        core.some((x) => x.name === r),
        r,
      );
    }
    const root = (await api(url, 'GET', '/openapi/v3')).body.paths as Record<
      string,
      { serverRelativeURL: string }
    >;
    const doc = (await api(url, 'GET', root['api/v1']!.serverRelativeURL)).body as {
      paths: Record<string, { patch?: { parameters: { name: string; in: string }[] } }>;
    };
    const patch = doc.paths['/api/v1/namespaces/{namespace}/pods/{name}']!.patch!;
    assert.ok(patch.parameters.some((p) => p.name === 'fieldValidation' && p.in === 'query'));
  });
});

describe('sandbox API: OpenAPI v3 document hashes', () => {
  it("each root entry's hash is the SHA-512 of what its URL serves, the same on every read, and new when a CRD changes", async (t) => {
    const { url } = await useSandbox(t);
    const root = async () =>
      (await api(url, 'GET', '/openapi/v3')).body.paths as Record<string, { serverRelativeURL: string }>;
    const hashOf = (u: string) => new URL(u, url).searchParams.get('hash');
    const served = async (u: string) => {
      const res = await fetch(new URL(u, url));
      return createHash('sha512')
        .update(await res.text())
        .digest('hex')
        .toUpperCase();
    };
    const first = await root();
    assert.equal(
      hashOf(first['api/v1']!.serverRelativeURL),
      await served(first['api/v1']!.serverRelativeURL),
    );
    assert.deepEqual(await root(), first, 'the same root on a second read');
    const crd = (description: string) => ({
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'CustomResourceDefinition',
      metadata: { name: 'widgets.example.com' },
      spec: {
        group: 'example.com',
        scope: 'Namespaced',
        names: { plural: 'widgets', singular: 'widget', kind: 'Widget', listKind: 'WidgetList' },
        versions: [
          {
            name: 'v1',
            served: true,
            storage: true,
            schema: {
              openAPIV3Schema: {
                type: 'object',
                properties: {
                  spec: { type: 'object', description, properties: { size: { type: 'integer' } } },
                },
              },
            },
          },
        ],
      },
    });
    const crds = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions';
    assert.equal((await api(url, 'POST', crds, crd('one'))).status, 201);
    const withCrd = (await root())['apis/example.com/v1'];
    assert.ok(withCrd, 'the CRD group version is listed');
    assert.equal(hashOf(withCrd.serverRelativeURL), await served(withCrd.serverRelativeURL));
    const got = (await api(url, 'GET', `${crds}/widgets.example.com`)).body as { metadata: object };
    const changed = { ...crd('two'), metadata: got.metadata };
    assert.equal((await api(url, 'PUT', `${crds}/widgets.example.com`, changed)).status, 200);
    const after = (await root())['apis/example.com/v1']!;
    assert.notEqual(
      hashOf(after.serverRelativeURL),
      hashOf(withCrd.serverRelativeURL),
      'a changed CRD, a new hash',
    );
    assert.equal(hashOf(after.serverRelativeURL), await served(after.serverRelativeURL));
  });
});

describe('sandbox API: TLS and bearer token', () => {
  it('401 without the token, 200 with it; health stays public', async (t) => {
    const { selfSignedCertificate } = await import('../../../src/runtime/tls.ts');
    const tls = await selfSignedCertificate('127.0.0.1');
    const { url, kc } = await useSandbox(t, { tls, token: 'sekret', caPem: tls.cert });
    assert.match(url, /^https:/);
    const { CoreV1Api } = await import('@kubernetes/client-node');
    const ok = await kc.makeApiClient(CoreV1Api).listNamespace();
    assert.ok(ok.items.length >= 3);
    const { Agent, fetch: ufetch } = await import('undici');
    const dispatcher = new Agent({ connect: { ca: tls.cert } });
    t.after(() => dispatcher.close());
    const no = await ufetch(`${url}/api/v1/namespaces`, { dispatcher });
    assert.equal(no.status, 401);
    assert.equal(((await no.json()) as { reason: string }).reason, 'Unauthorized');
    const health = await ufetch(`${url}/healthz`, { dispatcher });
    assert.equal(health.status, 200);
  });
});
