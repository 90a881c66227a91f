/**
 * The release kit: the Dockerfile keeps its rules (multi-stage, the published tarball installed
 * without dev dependencies, a non-root numeric user, an SBOM inside, no remote ADD), the package,
 * the chart and the CHANGELOG name one version, and `npm run image` without a container engine
 * says so in one line and exits 2 instead of half building.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { promisify } from 'node:util';
import { parse } from 'yaml';
import { ROOT } from '../../support/cli-process.ts';

const run = promisify(execFile);
const read = (p: string) => readFileSync(join(ROOT, p), 'utf8');

/** The Dockerfile's instructions, continuation lines joined, comments left out. */
function instructions(text: string): { op: string; args: string; stage: number }[] {
  const out: { op: string; args: string; stage: number }[] = [];
  let stage = -1;
  for (const line of text.replace(/\\\n/g, ' ').split('\n')) {
    const m = /^\s*([A-Z]+)\s+(.*)$/.exec(line);
    if (!m || line.trimStart().startsWith('#')) continue;
    if (m[1] === 'FROM') stage++;
    out.push({ op: m[1]!, args: m[2]!.trim(), stage });
  }
  return out;
}

describe('release kit', () => {
  it('the Dockerfile: multi-stage, the packed tarball without dev dependencies, non-root, an SBOM', () => {
    const ins = instructions(read('Dockerfile'));
    const froms = ins.filter((i) => i.op === 'FROM');
    assert.ok(froms.length >= 2, 'a build stage and a runtime stage');
    const last = froms.length - 1;
    const final = ins.filter((i) => i.stage === last);
    // The runtime stage installs the tarball npm pack made, production dependencies only.
    assert.ok(
      final.some((i) => i.op === 'RUN' && /npm install --global --omit=dev .*npl-lb-\*\.tgz/.test(i.args)),
    );
    assert.ok(!final.some((i) => i.op === 'RUN' && /npm (ci|install)(?!.*--omit=dev)/.test(i.args)));
    assert.ok(
      !final.some((i) => i.op === 'COPY' && /^\.\s/.test(i.args)),
      'no source tree in the runtime stage',
    );
    // A numeric non-root user, last: the chart's runAsNonRoot needs a number to check.
    const users = final.filter((i) => i.op === 'USER');
    assert.match(users.at(-1)?.args ?? '', /^[1-9]\d*(:[1-9]\d*)?$/);
    // The SBOM is made from the lockfile in the build stage and shipped.
    assert.ok(ins.some((i) => i.stage < last && /npm sbom --omit=dev --sbom-format=cyclonedx/.test(i.args)));
    assert.ok(
      final.some(
        (i) => i.op === 'COPY' && /sbom\.cdx\.json \/usr\/share\/npl-lb\/sbom\.cdx\.json/.test(i.args),
      ),
    );
    assert.ok(!ins.some((i) => i.op === 'ADD' && /https?:/.test(i.args)), 'no remote ADD');
    assert.match(read('.dockerignore'), /^node_modules\/$/m);
    assert.match(read('.dockerignore'), /^\.test-build\/$/m);
  });

  it('the package, the chart and the CHANGELOG name one version', () => {
    const pkg = JSON.parse(read('package.json')) as { version: string; scripts: Record<string, string> };
    const chart = parse(read('deploy/helm/npl-lb/Chart.yaml')) as { version: string; appVersion: string };
    assert.equal(chart.version, pkg.version);
    assert.equal(chart.appVersion, pkg.version);
    assert.match(read('CHANGELOG.md'), new RegExp(`^## ${pkg.version.replaceAll('.', '\\.')}\\b`, 'm'));
    assert.ok(pkg.scripts.image && pkg.scripts.chart, 'npm run image and npm run chart');
  });

  it('npm run image without a container engine: one line naming what it tried, exit 2', async () => {
    // A PATH holding node alone: neither docker nor podman is found.
    const bin = mkdtempSync(join(tmpdir(), 'npl-image-'));
    try {
      symlinkSync(process.execPath, join(bin, 'node'));
      const r = await run(join(bin, 'node'), [join(ROOT, 'scripts/image.mjs')], {
        env: { PATH: bin },
      }).then(
        () => ({ code: 0, stderr: '' }),
        (e: { code: number; stderr: string }) => e,
      );
      assert.equal(r.code, 2);
      assert.deepEqual(r.stderr.trim().split('\n'), [
        'image: no container engine answers (docker: not installed; podman: not installed); install docker or podman, or build the Dockerfile elsewhere',
      ]);
      const bad = await run(join(bin, 'node'), [join(ROOT, 'scripts/image.mjs'), '--engine', 'rkt'], {
        env: { PATH: bin },
      }).then(
        () => ({ code: 0, stderr: '' }),
        (e: { code: number; stderr: string }) => e,
      );
      assert.equal(bad.code, 2);
      assert.match(bad.stderr, /--engine must be docker or podman/);
    } finally {
      rmSync(bin, { recursive: true, force: true });
    }
  });
});
