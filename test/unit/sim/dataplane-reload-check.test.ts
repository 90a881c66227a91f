/**
 * The Data Plane simulator checks a configuration once per reload: a reload the install has just
 * checked (`haproxy -c` on that very text) does not check it again, and one whose file has changed
 * since (a later install that needed no reload wrote it unchecked) checks it again; a reload
 * scheduled without a checked text always checks.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { configPath, type HaproxyProcess } from '../../../adapters/haproxy/process.ts';
import { ReloadAgent } from '../../../sim/haproxy-dataplane/reload-agent.ts';

/** A process stand-in recording how each reload was asked (no HAProxy is started). */
function fakeProcess(workDir: string) {
  const asked: boolean[] = [];
  const proc = {
    paths: { bin: 'haproxy', workDir },
    runtime: async () => '',
    reload: async (o: { checked?: boolean } = {}) => {
      asked.push(o.checked === true);
    },
  } as unknown as HaproxyProcess;
  return { proc, asked };
}

describe('Data Plane simulator: one check per reload', () => {
  it('skips the check only while the file is still the text the install checked', async (t) => {
    const dir = mkdtempSync(join(tmpdir(), 'npl-reload-check-'));
    t.after(() => rmSync(dir, { recursive: true, force: true }));
    const { proc, asked } = fakeProcess(dir);
    const agent = new ReloadAgent(proc, dir);
    const file = configPath(proc.paths);

    writeFileSync(file, 'checked text\n');
    agent.schedule([], false, 'checked text\n');
    await agent.idle();
    // A later install rewrote the file without checking it (a runtime-only change).
    agent.schedule([], false, 'checked text\n');
    writeFileSync(file, 'unchecked text\n');
    await agent.idle();
    agent.schedule([], false);
    await agent.idle();
    assert.deepEqual(asked, [true, false, false]);
    assert.deepEqual(
      [...agent.reloads.values()].map((r) => r.status),
      ['succeeded', 'succeeded', 'succeeded'],
    );
  });
});
