/**
 * The layout's import rules (DESIGN.md), enforced: adapters import only src/model, src/adapter,
 * src/runtime and src/migrate (the API of vendors' migrations); only src/main imports adapters/; src/agent and src/controller never import each
 * other; src/model and src/plan do no I/O.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));

function files(dir: string): string[] {
  return readdirSync(join(ROOT, dir), { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile() && e.name.endsWith('.ts'))
    .map((e) => relative(ROOT, join(e.parentPath, e.name)));
}

/** Every module a file imports: repo-relative paths for relative specifiers, else the package. */
function imports(file: string): string[] {
  const text = readFileSync(join(ROOT, file), 'utf8');
  const specs = [
    ...text.matchAll(/^\s*(?:import|export)\s[^;]*?\sfrom\s+'([^']+)'/gms),
    ...text.matchAll(/\bimport\(\s*'([^']+)'\s*\)/g),
  ].map((m) => m[1]!);
  return specs.map((s) => (s.startsWith('.') ? relative(ROOT, resolve(ROOT, dirname(file), s)) : s));
}

const under = (path: string, dir: string) => path === dir || path.startsWith(`${dir}/`);

function violations(from: string[], bad: (target: string, file: string) => boolean): string[] {
  return from.flatMap((f) =>
    imports(f)
      .filter((t) => bad(t, f))
      .map((t) => `${f} -> ${t}`),
  );
}

/** The strongly connected components of more than one file (Tarjan): each is an import circle. */
function circles(edges: Map<string, string[]>): string[][] {
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const out: string[][] = [];
  const visit = (v: string): void => {
    index.set(v, next);
    low.set(v, next++);
    stack.push(v);
    onStack.add(v);
    for (const w of edges.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) === index.get(v)) {
      const scc: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        scc.push(w);
      } while (w !== v);
      if (scc.length > 1) out.push(scc.sort());
    }
  };
  for (const v of edges.keys()) if (!index.has(v)) visit(v);
  return out;
}

describe('import rules', () => {
  it('adapters import only src/model, src/adapter, src/runtime and src/migrate of the core', () => {
    // src/migrate is the API a vendor's migrations (Vendor.migrations) are written against.
    const allowed = ['src/model', 'src/adapter', 'src/runtime', 'src/migrate'];
    assert.deepEqual(
      violations(files('adapters'), (t) => under(t, 'src') && !allowed.some((a) => under(t, a))),
      [],
    );
  });

  it('only src/main imports adapters/', () => {
    const core = files('src').filter((f) => !under(f, 'src/main'));
    assert.deepEqual(
      violations(core, (t) => under(t, 'adapters')),
      [],
    );
  });

  it('src/agent and src/controller never import each other', () => {
    assert.deepEqual(
      [
        ...violations(files('src/agent'), (t) => under(t, 'src/controller')),
        ...violations(files('src/controller'), (t) => under(t, 'src/agent')),
      ],
      [],
    );
  });

  it('src/model and src/plan do no I/O', () => {
    const io =
      /^(node:)?(fs|fs\/promises|net|http|https|http2|dgram|child_process|tls|dns)$|^undici$|^@kubernetes\/client-node$/;
    const pure = ['src/model', 'src/plan', 'src/adapter/changes.ts'];
    assert.deepEqual(
      violations(
        [...files('src/model'), ...files('src/plan')],
        (t) =>
          io.test(t) || (under(t, 'src') && !pure.some((p) => under(t, p.replace(/\.ts$/, '')) || t === p)),
      ),
      [],
    );
  });

  it('no product file imports a stand-in (sim/, src/sandbox/); only the commands that run them do', () => {
    // The composition roots of `npl-lb sim`, `npl-lb sandbox` and the demo run the stand-ins.
    const roots = ['src/main/sim.ts', 'src/main/sandbox.ts', 'src/main/demo.ts'];
    const product = [...files('src'), ...files('adapters')].filter(
      (f) => !roots.includes(f) && !under(f, 'src/sandbox'),
    );
    assert.deepEqual(
      violations(product, (t) => under(t, 'sim') || under(t, 'src/sandbox')),
      [],
    );
  });

  it('a simulator checks with code of its own, not the adapter it stands in for', () => {
    // What a simulator still shares with its adapter: the Data Plane API's object models (zod
    // schemas of the published spec; every exchange of the tests is also held to the spec itself
    // with ajv, test/support/dataplane-spec.ts) and the HAProxy process runner (it runs the real
    // HAProxy the simulator drives; it checks nothing).
    const borrowed = new Set([
      'sim/haproxy-dataplane/config-crud.ts -> adapters/haproxy/dataplane/models.ts',
      'sim/haproxy-dataplane/config-store.ts -> adapters/haproxy/dataplane/models.ts',
      'sim/haproxy-dataplane/global-section.ts -> adapters/haproxy/dataplane/models.ts',
      'sim/haproxy-dataplane/reload-agent.ts -> adapters/haproxy/dataplane/models.ts',
      'sim/haproxy-dataplane/reload-agent.ts -> adapters/haproxy/process.ts',
      'sim/haproxy-dataplane/runtime-servers.ts -> adapters/haproxy/dataplane/models.ts',
      'sim/haproxy-dataplane/simulator.ts -> adapters/haproxy/dataplane/models.ts',
      'sim/haproxy-dataplane/simulator.ts -> adapters/haproxy/process.ts',
      'sim/haproxy-dataplane/storage.ts -> adapters/haproxy/dataplane/models.ts',
    ]);
    assert.deepEqual(
      violations(files('sim'), (t) => under(t, 'adapters')).filter((v) => !borrowed.has(v)),
      [],
    );
  });

  it('src/source/ has no import circle (type imports included)', () => {
    const inSource = new Set(files('src/source'));
    const edges = new Map(
      [...inSource].map((f) => [
        f,
        imports(f)
          .map((t) => `${t}`)
          .filter((t) => inSource.has(t)),
      ]),
    );
    assert.deepEqual(circles(edges), []);
  });

  it('the circle finder finds a circle', () => {
    const edges = new Map([
      ['a', ['b']],
      ['b', ['c']],
      ['c', ['a']],
      ['d', ['a']],
    ]);
    assert.deepEqual(circles(edges), [['a', 'b', 'c']]);
  });

  it('the checker sees imports (a file known to import across the layout)', () => {
    assert.ok(imports('src/main/controller.ts').some((t) => under(t, 'adapters')));
    assert.ok(imports('adapters/memory/adapter.ts').includes('src/adapter/changes.ts'));
  });
});
