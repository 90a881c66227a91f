/**
 * The simulated Data Plane API's global section (global-section.ts) and the rule types request
 * mirrors use (rule-lines.ts), and the transport's side of them (mirror-layout.ts): the Lua loads
 * in each version's field, rendered `lua-load`; a field the simulator would drop, or a load that is
 * not an absolute path, refused (422); `wait-for-body` and `lua` rules written as HAProxy reads
 * them, a missing field refused; a load added once, in the version's field, and taken away alone;
 * a mirror frontend served only as written and only where the script is loaded; the script taken
 * away once no route mirrors, but never while another cluster's does on the same HAProxy.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { globalLines, readGlobal, writeGlobal } from '../../../sim/haproxy-dataplane/global-section.ts';
import { httpRuleLine, RuleRefused } from '../../../sim/haproxy-dataplane/rule-lines.ts';
import { DpError } from '../../../sim/haproxy-dataplane/config-crud.ts';
import {
  luaLoads,
  mirrorLayouts,
  servedMirrorPools,
  withLuaLoad,
  withoutLuaLoad,
} from '../../../adapters/haproxy/dataplane/mirror-layout.ts';
import * as kit from '../../support/model.ts';
import { mirrorScriptPrune } from '../../../adapters/haproxy/dataplane/mirror-ops.ts';
import type { BuildContext, Built, Ops } from '../../../adapters/haproxy/dataplane/transaction-plan.ts';
import type { DpGlobal } from '../../../adapters/haproxy/dataplane/models.ts';

const FILE = '/etc/haproxy/general/npl-mirror.lua';

describe('the simulated global section', () => {
  it('stores the Lua loads of either version and renders them', () => {
    const v2 = writeGlobal('v2', { lua_loads: [{ file: FILE }] });
    const v3 = writeGlobal('v3', { lua_options: { loads: [{ file: FILE }] } });
    assert.deepEqual(v2, v3);
    assert.deepEqual(globalLines(v3), [`    lua-load ${FILE}`]);
    assert.deepEqual(readGlobal('v2', v3), { lua_loads: [{ file: FILE }] });
    assert.deepEqual(readGlobal('v3', v3), { lua_options: { loads: [{ file: FILE }] } });
    assert.deepEqual(writeGlobal('v3', {}), {});
  });

  it('refuses what it would drop, and a load that is not an absolute path', () => {
    for (const [v, body] of [
      ['v3', { maxconn: 10 }],
      ['v2', { lua_options: { loads: [{ file: FILE }] } }],
      ['v3', { lua_options: { loads: [{ file: 'x.lua' }] } }],
      ['v3', { lua_options: { loads: [{ file: '/a b.lua' }] } }],
    ] as const)
      assert.throws(
        () => writeGlobal(v, body),
        (e: unknown) => e instanceof DpError && e.status === 422,
      );
  });

  it('writes wait-for-body and lua rules as HAProxy reads them', () => {
    assert.equal(
      httpRuleLine('request', { type: 'wait-for-body', wait_time: 1000, cond: 'if', cond_test: 'is_r0' }),
      'http-request wait-for-body time 1000 if is_r0',
    );
    assert.equal(
      httpRuleLine('request', { type: 'lua', lua_action: 'npl_mirror', lua_params: 'abns@x' }),
      'http-request lua.npl_mirror abns@x',
    );
    assert.throws(() => httpRuleLine('request', { type: 'lua' }), RuleRefused);
    assert.throws(() => httpRuleLine('request', { type: 'wait-for-body' }), RuleRefused);
  });
});

describe("the Data Plane transport's mirrors", () => {
  const vs = kit.l7(
    'c1--gw',
    [kit.route({ host: '', pool: 'c1--web', source: 's', mirrors: [{ pool: 'c1--shadow' }] })],
    { vip: '192.0.2.1', ingressClass: 'x' },
  );
  it('adds the load once, in the version field', () => {
    assert.deepEqual(withLuaLoad({}, 'v2', FILE), { lua_loads: [{ file: FILE }] });
    const v3 = withLuaLoad({ lua_options: { loads: [{ file: '/other.lua' }] } }, 'v3', FILE);
    assert.deepEqual(luaLoads(v3), ['/other.lua', FILE]);
    assert.equal(withLuaLoad(v3, 'v3', FILE), v3);
  });

  it('takes only our load away, from whichever field holds it, the others kept', () => {
    assert.deepEqual(withoutLuaLoad({ lua_loads: [{ file: FILE }], daemon: true }, FILE), {
      lua_loads: [],
      daemon: true,
    });
    const v3 = { lua_options: { loads: [{ file: '/other.lua' }, { file: FILE }], tune: 1 } };
    assert.deepEqual(withoutLuaLoad(v3, FILE), { lua_options: { loads: [{ file: '/other.lua' }], tune: 1 } });
    assert.deepEqual(withoutLuaLoad({}, FILE), {});
  });

  it('serves a mirror only as written, and only where the script is loaded', () => {
    const sections = mirrorLayouts(vs, { owner: 'c1', instance: 'http://dp' });
    assert.equal(sections.length, 1);
    assert.deepEqual([...servedMirrorPools('c1--gw', sections, 'http://dp', true)], ['c1--shadow']);
    assert.deepEqual([...servedMirrorPools('c1--gw', sections, 'http://dp', false)], [], 'script not loaded');
    assert.deepEqual([...servedMirrorPools('c1--gw', sections, 'http://other', true)], [], 'another socket');
    const moved = [{ ...sections[0]!, frontend: { ...sections[0]!.frontend, default_backend: 'c1--web' } }];
    assert.deepEqual([...servedMirrorPools('c1--gw', moved, 'http://dp', true)], [], 'another backend');
  });
});

describe('the mirrors’ script taken away (mirrorScriptPrune)', () => {
  /** A device with our script loaded, and these frontends; what the prune wrote. */
  async function prune(frontends: { name: string; description?: string }[]) {
    const wrote = { global: [] as DpGlobal[], deleted: [] as string[] };
    const ctx = {
      layout: { owner: 'c1' },
      client: {
        frontends: async () => frontends,
        global: async () => ({ lua_loads: [{ file: FILE }, { file: '/theirs.lua' }] }),
        putGlobal: async (_tx: string, g: DpGlobal) => void wrote.global.push(g),
      },
      certs: {
        storedFiles: () => new Map([['npl-mirror.lua', FILE]]),
        deleteGeneral: async (name: string) => void wrote.deleted.push(name),
      },
    } as unknown as BuildContext;
    const ops: Ops = { frontendDeletes: [], backends: [], frontends: [], backendDeletes: [] };
    const out: Built = { pre: [], ops: [], post: [], backends: new Map(), frontends: new Map() };
    mirrorScriptPrune(ctx, ops, out);
    for (const op of ops.backends) await op.run('tx1');
    for (const op of out.post) await op.run('');
    return wrote;
  }
  const mirror = (owner: string) => ({
    name: `${owner}--gw-shop.web-HTTP-80_m0`,
    description: `npl-lb mirror partOf=${owner}--gw-shop.web-HTTP-80 pool=${owner}--shadow`,
  });

  it('stops loading it and deletes it when no frontend on the device mirrors, or only ours going away', async () => {
    for (const frontends of [[], [mirror('c1')], [{ name: 'c2--web', description: 'npl-lb owner=c2' }]]) {
      const wrote = await prune(frontends);
      assert.deepEqual(wrote.global, [{ lua_loads: [{ file: '/theirs.lua' }] }], 'only our load goes');
      assert.deepEqual(wrote.deleted, ['npl-mirror.lua']);
    }
  });

  it('leaves both while another cluster’s route mirrors on the same HAProxy', async () => {
    const wrote = await prune([mirror('c1'), mirror('c2')]);
    assert.deepEqual(wrote, { global: [], deleted: [] });
  });
});
