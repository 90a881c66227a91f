/**
 * Issue 46, items 3 and 5: every request body the sandbox takes gets an answer below 500. Deep
 * JSON (past 1,000 levels) is a 400 before any recursive code sees it, in every body (create,
 * merge, strategic merge and JSON patches, apply); deep, aliased ("billion laughs") and
 * duplicate-keyed YAML is a 400; a `__proto__` data key is kept as data by every write path, as
 * the API server keeps it; a large YAML apply configuration is parsed off the event loop and
 * applied whole. A property test sends arbitrary JSON bodies to every write verb.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import fc from 'fast-check';
import { startSandbox, type SandboxServer } from '../../../src/sandbox/server.ts';
import { MAX_BODY_DEPTH } from '../../../src/sandbox/http-body.ts';

let sb: SandboxServer;
before(async () => {
  sb = await startSandbox({});
});
after(() => sb.close());

const CM = '/api/v1/namespaces/default/configmaps';
const send = async (method: string, path: string, body?: string, type = 'application/json') => {
  const r = await fetch(sb.url + path, {
    method,
    headers: { 'content-type': type },
    ...(body ? { body } : {}),
  });
  const text = await r.text();
  return { status: r.status, text };
};
const configMap = (name: string, data: Record<string, string> = { a: 'b' }) =>
  JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: 'default' }, data });
const nested = (depth: number) => `${'{"x":'.repeat(depth - 1)}{}${'}'.repeat(depth - 1)}`;
const PATCHES = [
  'application/merge-patch+json',
  'application/strategic-merge-patch+json',
  'application/apply-patch+yaml',
] as const;

describe('sandbox request bodies: a 4xx for what it refuses, never a 500', () => {
  it('deep JSON: a 400 past 1,000 levels in every body, and no 500 just below it', async () => {
    assert.equal((await send('POST', CM, configMap('deep'))).status, 201);
    for (const depth of [MAX_BODY_DEPTH + 5, 200_000]) {
      const labels = `{"metadata":{"labels":${nested(depth)}}}`;
      for (const type of PATCHES) {
        const r = await send('PATCH', `${CM}/deep?fieldManager=t`, labels, type);
        assert.equal(r.status, 400, `${type} ${depth}: ${r.text.slice(0, 200)}`);
        assert.match(r.text, /max depth/);
      }
      const create = `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"d2"},"data":${nested(depth)}}`;
      assert.equal((await send('POST', CM, create)).status, 400);
      const jsonPatch = `[{"op":"add","path":"/metadata/annotations","value":${nested(depth)}}]`;
      assert.equal((await send('PATCH', `${CM}/deep`, jsonPatch, 'application/json-patch+json')).status, 400);
    }
    // Just below the limit: refused by the schema or taken, but never a crash.
    const near = `{"metadata":{"labels":${nested(MAX_BODY_DEPTH - 3)}}}`;
    for (const type of PATCHES) {
      const r = await send('PATCH', `${CM}/deep?fieldManager=t`, near, type);
      assert.ok(r.status < 500, `${type}: ${r.status} ${r.text.slice(0, 200)}`);
    }
    const got = await fetch(`${sb.url}${CM}/deep`).then((r) => r.json() as Promise<{ data: unknown }>);
    assert.deepEqual(got.data, { a: 'b' }, 'the object is unchanged');
  });

  it('YAML: aliases that expand ("billion laughs"), deep nesting and a key given twice are 400s', async () => {
    const laughs = [
      'apiVersion: v1',
      'kind: ConfigMap',
      'metadata: {name: laughs}',
      'a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]',
      ...'bcdefghi'.split('').map((k, i) => `${k}: &${k} [${Array(9).fill(`*${'abcdefghi'[i]}`).join(',')}]`),
    ].join('\n');
    const deep = `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: deep}\ndata: ${'['.repeat(5000)}${']'.repeat(5000)}\n`;
    const dup = 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: dup}\ndata: {a: "1"}\ndata: {a: "2"}\n';
    for (const [name, body, said] of [
      ['laughs', laughs, /aliases/],
      ['deep', deep, /deeper than/],
      ['dup', dup, /unique/],
    ] as const) {
      const r = await send('PATCH', `${CM}/${name}?fieldManager=t`, body, 'application/apply-patch+yaml');
      assert.equal(r.status, 400, `${name}: ${r.text.slice(0, 200)}`);
      assert.match(r.text, said);
      const c = await send('POST', CM, body, 'application/yaml');
      assert.equal(c.status, 400, `${name} as a YAML create`);
    }
  });

  it('`__proto__` is a data key: kept by create, merge and strategic merge patches and apply', async () => {
    const body = `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"proto"},"data":{"__proto__":"created"}}`;
    assert.equal((await send('POST', CM, body)).status, 201);
    const read = async () =>
      JSON.parse((await send('GET', `${CM}/proto`)).text) as {
        data: Record<string, string>;
      };
    const own = (o: Record<string, string>) => (Object.hasOwn(o, '__proto__') ? o['__proto__'] : undefined);
    assert.equal(own((await read()).data), 'created');
    for (const [type, value] of [
      ['application/merge-patch+json', 'merged'],
      ['application/strategic-merge-patch+json', 'strategic'],
    ] as const) {
      assert.equal(
        (await send('PATCH', `${CM}/proto`, `{"data":{"__proto__":"${value}"}}`, type)).status,
        200,
      );
      assert.equal(own((await read()).data), value, type);
    }
    const applied = `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"proto"},"data":{"__proto__":"applied"}}`;
    const a = await send(
      'PATCH',
      `${CM}/proto?fieldManager=t&force=true`,
      applied,
      'application/apply-patch+yaml',
    );
    assert.equal(a.status, 200, a.text.slice(0, 200));
    assert.equal(own((await read()).data), 'applied');
  });

  it('a 16,000-key YAML apply configuration (parsed off the event loop) is applied whole, twice', async () => {
    const lines = ['apiVersion: v1', 'kind: ConfigMap', 'metadata:', '  name: big', 'data:'];
    for (let i = 0; i < 16_000; i++) lines.push(`  key-${i}: "value-${i}"`);
    for (let round = 0; round < 2; round++) {
      const r = await send(
        'PATCH',
        `${CM}/big?fieldManager=t`,
        lines.join('\n'),
        'application/apply-patch+yaml',
      );
      assert.equal(r.status, 200);
      const obj = JSON.parse(r.text) as { data: Record<string, string>; metadata: { generation?: number } };
      assert.equal(Object.keys(obj.data).length, 16_000);
      assert.equal(obj.data['key-15999'], 'value-15999');
    }
  });

  it('property: arbitrary JSON in every write verb gets an answer below 500', async () => {
    assert.equal((await send('POST', CM, configMap('fuzz'))).status, 201);
    const verbs: [string, string, string][] = [
      ['POST', CM, 'application/json'],
      ['PUT', `${CM}/fuzz`, 'application/json'],
      ['PATCH', `${CM}/fuzz`, 'application/merge-patch+json'],
      ['PATCH', `${CM}/fuzz`, 'application/strategic-merge-patch+json'],
      ['PATCH', `${CM}/fuzz`, 'application/json-patch+json'],
      ['PATCH', `${CM}/fuzz?fieldManager=f`, 'application/apply-patch+yaml'],
    ];
    const body = fc.oneof(
      fc.jsonValue(),
      fc.record({
        apiVersion: fc.constant('v1'),
        kind: fc.constant('ConfigMap'),
        metadata: fc.jsonValue(),
        data: fc.jsonValue(),
      }),
      fc.record({
        metadata: fc.record({ labels: fc.dictionary(fc.string(), fc.jsonValue()) }),
        data: fc.jsonValue(),
      }),
    );
    await fc.assert(
      fc.asyncProperty(body, fc.constantFrom(...verbs), async (b, [method, path, type]) => {
        const r = await send(method, path, JSON.stringify(b), type);
        assert.ok(r.status < 500, `${method} ${type}: ${r.status} ${r.text.slice(0, 300)}`);
      }),
      { numRuns: 300, seed: 46 },
    );
  });
});
