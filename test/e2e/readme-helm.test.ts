/**
 * The README's "Installing the chart with Helm, on the demo's sandbox" as written: a demo runs
 * (npm start), and each `npm run helm` / `npm run kubectl` line of that section runs in the clone
 * against it, in order; what each prints is checked. The demo's own work directory is a
 * temporary one (KUBECONFIG points there), so a developer's running demo is left alone.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { it } from 'node:test';
import { promisify } from 'node:util';
import { exited, ROOT } from '../support/cli-process.ts';
import { startDemo } from '../support/demo-process.ts';
import { ensureKubeTools } from '../support/kube-tools.ts';
import { eventually } from '../support/sandbox.ts';

const run = promisify(execFile);

it("the README's Helm walk-through on the demo's sandbox, command by command", async (t) => {
  ensureKubeTools();
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
  const section = readme.slice(readme.indexOf("### Installing the chart with Helm, on the demo's sandbox"));
  const block = /```sh\n([\s\S]*?)```/.exec(section)![1]!;
  // A line ending in `\` goes on on the next one, as in a shell.
  const lines = block
    .trim()
    .replace(/\\\n\s*/g, '')
    .split('\n');
  assert.ok(lines.length >= 4 && lines.every((l) => /^npm run (helm|kubectl) -- /.test(l)), block);

  // Stopped, its HAProxy too, and its folder removed after the test whatever happens.
  const demo = startDemo(t);
  const dir = demo.dir;
  // The demo waits up to 45 s for traffic before its banner (as demo.test.ts: 90 s on a loaded machine).
  await eventually(() => /Press Ctrl-C/.test(demo.out()), 90_000, 'demo start');
  const env = { ...process.env, KUBECONFIG: join(dir, 'kubeconfig'), HOME: dir };
  const outputs: string[] = [];
  for (const line of lines) {
    const r = await run('sh', ['-c', line], { cwd: ROOT, env, timeout: 60_000 });
    outputs.push(r.stdout);
  }
  const [install, get, upgrade, history, uninstall] = outputs;
  assert.match(install!, /STATUS: deployed/);
  assert.match(get!, /deployment.apps\/npl-lb-controller/);
  assert.match(get!, /daemonset.apps\/npl-lb-agent/);
  // --wait returned once they were ready: the controller's two Pods, one agent per demo node.
  assert.match(get!, /deployment.apps\/npl-lb-controller\s+2\/2\s/);
  assert.equal(get!.match(/pod\/npl-lb-(controller|agent)-\S+\s+1\/1\s+Running\s/g)?.length, 5, get);
  assert.match(upgrade!, /has been upgraded/);
  assert.match(history!, /2\s.*deployed.*Upgrade complete/);
  assert.match(uninstall!, /release "npl-lb" uninstalled/);
  demo.child.kill('SIGTERM');
  assert.equal(await exited(demo.child), 0, 'the demo stops cleanly');
});
