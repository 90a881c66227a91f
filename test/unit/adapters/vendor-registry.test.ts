/**
 * A fourth vendor is its folder and one registry line: a stub vendor (an adapter over an in-memory
 * device of its own, its `adapter:` block, credentials word and LoadBalancerParameters section) is
 * written into a temporary folder, registered beside the others by one line there, and then made
 * by the controller's factory, documented by the configuration reference, placed by its own
 * section of LoadBalancerParameters (a bad value refused naming the field), and held to the shared
 * adapter contract; nothing outside its folder is touched.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { after, describe, it } from 'node:test';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { Vendor } from '../../../src/adapter/vendor.ts';
import { makeAdapter } from '../../../adapters/index.ts';
import { chartAdapterSchema } from '../../../src/main/chart-schema.ts';
import { configurationReference } from '../../../src/main/config-reference.ts';
import { resolveParameters } from '../../../src/source/gateway/parameters.ts';
import type { LoadBalancerParameters } from '../../../src/kube/parameters-objects.ts';
import { adapterContract } from '../../contract/adapter-contract.ts';
import type { StubAdapterLike } from './stub-vendor/types.ts';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const FIXTURES = fileURLToPath(new URL('./stub-vendor/', import.meta.url));
/** What .gitignore leaves out: where other test files of the run write, beside this one. */
const IGNORED = new Set([
  '.git',
  'node_modules',
  '.tools',
  'dist',
  'test-artifacts',
  '.npl-lb',
  '.test-build',
]);
/** Every file of the tree with its size and time: what a change outside the folder would move. */
const status = (): string[] => {
  const out: string[] = [];
  const walk = (dir: string) => {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      const p = join(dir, e.name);
      if (IGNORED.has(e.name) || e.name.endsWith('.log') || relative(ROOT, p) === 'bench/results') continue;
      if (e.isDirectory()) walk(p);
      else if (e.isFile()) {
        const st = statSync(p);
        out.push(`${relative(ROOT, p)} ${st.size} ${st.mtimeMs}`);
      }
    }
  };
  walk(ROOT);
  return out;
};
// Compiled (npm test runs the mirror, .test-build/), the stub's TypeScript needs a loader, and its
// imports of the product take the compiled modules this file took, never a second copy of them.
const COMPILED = import.meta.url.endsWith('.js');
if (COMPILED) (await import('tsx/esm/api')).register();
const ext = COMPILED ? '.js' : '.ts';

// The vendor's folder, inside the repository (its imports resolve there), removed at the end.
const before = status();
const folder = mkdtempSync(join(ROOT, '.stub-vendor-'));
after(() => rmSync(folder, { recursive: true, force: true }));
for (const f of readdirSync(FIXTURES).filter((x) => x.endsWith('.ts.txt')))
  writeFileSync(
    join(folder, f.replace(/\.txt$/, '')),
    readFileSync(join(FIXTURES, f), 'utf8').replace(/('\.\.\/(?:src|adapters)\/[^']+)\.ts'/g, `$1${ext}'`),
  );
// The registry line, in a registry of the folder's own: the shipped one plus the stub.
writeFileSync(
  join(folder, 'registry.ts'),
  `import { VENDORS } from '../adapters/index${ext}';\nimport { stubVendor } from './vendor.ts';\nexport const REGISTRY = [...VENDORS, stubVendor];\n`,
);
const { REGISTRY } = (await import(pathToFileURL(join(folder, 'registry.ts')).href)) as {
  REGISTRY: Vendor[];
};
const { StubAdapter } = (await import(pathToFileURL(join(folder, 'adapter.ts')).href)) as {
  StubAdapter: StubAdapterLike;
};

describe('the vendor registry: a fourth vendor is its folder and one line', () => {
  it('touches nothing outside its folder', () => {
    const was = new Set(before);
    const changed = status().filter((l) => !was.has(l));
    assert.ok(changed.length > 0, 'the walk sees the folder');
    const prefix = folder.slice(ROOT.length);
    assert.deepEqual(
      changed.filter((l) => !l.startsWith(prefix)),
      [],
      'only the vendor folder is new',
    );
  });

  it("is made by the controller's factory by its type; an unknown type names the known ones", () => {
    const a = makeAdapter({ owner: 'c1', settings: { type: 'stub', endpoint: 'x' }, env: {} }, REGISTRY);
    assert.equal(a.name, 'stub');
    assert.throws(
      () => makeAdapter({ owner: 'c1', settings: { type: 'stub2' }, env: {} }, REGISTRY),
      /unknown adapter "stub2" \(known: memory, avi, f5, haproxy, stub\)/,
    );
  });

  it("is an adapter.type of the chart's values schema, generated from the registry", () => {
    const schema = chartAdapterSchema(REGISTRY) as { properties: { type: { enum: string[] } } };
    assert.ok(schema.properties.type.enum.includes('stub'));
  });

  it('is in the configuration reference: its block, its fields and its credentials word', () => {
    const doc = configurationReference(REGISTRY);
    assert.match(doc, /^## `adapter` for `type: stub`$/m);
    assert.match(
      doc,
      /^\| `adapter\.endpoint` \| string \| \*\*required\*\* \|.*the stub device's address \|$/m,
    );
    assert.match(doc, /NPL_LB_<AVI\|F5\|HAPROXY\|STUB>_USERNAME/);
  });

  it("places by its own section of LoadBalancerParameters, read by its own schema; others named as another's", () => {
    const obj = (name: string, spec: Record<string, unknown>): LoadBalancerParameters => ({
      metadata: { namespace: 'infra', name, uid: name, resourceVersion: '1', labels: {}, annotations: {} },
      spec,
    });
    const objects = [
      obj('good', { stub: { rack: 'r-7' }, avi: { serviceEngineGroup: 'se' } }),
      obj('bad', { stub: { rack: 'R 7' } }),
      obj('typo', { stub: { rak: 'r-7' } }),
    ];
    const lb = { name: 'stub', caps: new StubAdapter('c1').capabilities() };
    const at = { field: 'spec.parametersRef', namespace: 'infra' };
    const ref = (name: string) => ({ group: 'npl-lb.io', kind: 'LoadBalancerParameters', name });
    const good = resolveParameters(ref('good'), at, objects, lb);
    assert.deepEqual('placement' in good && good.placement, { rack: 'r-7' });
    assert.match(
      'note' in good ? (good.note ?? '') : '',
      /avi settings of infra\/good are for another load balancer/,
    );
    const bad = resolveParameters(ref('bad'), at, objects, lb);
    assert.match('invalid' in bad ? bad.invalid : '', /spec\.stub\.rack: lowercase letters, digits and "-"/);
    const typo = resolveParameters(ref('typo'), at, objects, lb);
    assert.match('invalid' in typo ? typo.invalid : '', /spec\.stub/);
  });
});

// The shared contract suite, against the stub's own in-memory device.
adapterContract('stub vendor (a fourth vendor from its folder alone)', async () => {
  const device = new (await import(pathToFileURL(join(folder, 'device.ts')).href)).StubDevice();
  return {
    adapter: async (owner, o) =>
      new StubAdapter(owner, device, (c) =>
        c.name === o?.failName
          ? { code: 'Unavailable', message: 'injected fault', terminal: false }
          : undefined,
      ),
    foreignPool: async (pool, owner) => {
      device.objects.set(`pool/${pool.name}`, { owner, kind: 'pool', value: pool });
    },
    close: async () => {},
  };
});

describe('the core names no vendor (issue 50: grep finds none in src/)', () => {
  /** The vendors of the registry and their controllers, as words, in any case. */
  const VENDOR_WORD = /\b(avi|f5|big-?ip|haproxy|as3|dataplane|ako|cis)\b/i;
  /** The CLI's simulator command, which names the simulators it starts. */
  const ALLOWED = new Set(['src/main/sim.ts', 'src/main/sim-kinds.ts']);
  const mentions = (text: string, file: string) =>
    text
      .split('\n')
      .map((line, i) => [line, i] as const)
      .filter(([line]) => VENDOR_WORD.test(line))
      .map(([line, i]) => `${file}:${i + 1}: ${line.trim()}`);

  it('src/ names no vendor outside the simulator command (comments and messages included)', () => {
    const src = join(ROOT, 'src');
    const found: string[] = [];
    const walk = (dir: string) => {
      for (const e of readdirSync(dir, { withFileTypes: true })) {
        const p = join(dir, e.name);
        if (e.isDirectory()) walk(p);
        else if (/\.(ts|js)$/.test(e.name) && !/\.d\.ts$/.test(e.name)) {
          const file = relative(ROOT, p).replace(/\.js$/, '.ts');
          if (!ALLOWED.has(file)) found.push(...mentions(readFileSync(p, 'utf8'), file));
        }
      }
    };
    walk(src);
    assert.deepEqual(found, []);
  });

  it('the check names a mention where there is one', () => {
    assert.equal(mentions('// as HAProxy does\nconst x = 1;', 'f.ts').length, 1);
    assert.equal(mentions('a BIG-IP partition', 'f.ts').length, 1);
    assert.equal(mentions('const As3Missing = 1; // avionics, cisterns', 'f.ts').length, 0);
  });
});
