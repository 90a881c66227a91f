/**
 * Issue 35's acceptance for migration: what `npl-lb migrate ako` and `npl-lb migrate cis` print for
 * AKO's and CIS's settings (the fixtures follow their published values and Deployment) is a values
 * file the real Helm 4 lints (--strict) and renders, whose ConfigMap the controller's config schema
 * and the adapter's settings accept, with the password given the way the notes say.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { before, describe, it } from 'node:test';
import { parseAllDocuments } from 'yaml';
import { makeAdapter } from '../../adapters/index.ts';
import { parseControllerConfig } from '../../src/config/controller-config.ts';
import { CLI, ROOT, run } from '../support/cli-process.ts';
import { ensureKubeTools } from '../support/kube-tools.ts';

const CHART = join(ROOT, 'deploy/helm/npl-lb');

describe('migrated values install with Helm', () => {
  let helm = '';
  before(() => {
    ({ helm } = ensureKubeTools());
  });

  // What the notes ask by hand: AKO's password (its username is carried over); CIS's credentials
  // came from a Secret (its Helm values name it, its Deployment reads it through the environment).
  const password = ['--set', 'credentials.password=s3cret'];
  const secret = ['--set', 'credentials.existingSecret=bigip-login'];
  const cases: [string, string[], string, string[]][] = [
    ['AKO values', ['migrate', 'ako', 'test/fixtures/migrate/ako-values.yaml'], 'avi', password],
    ['a CIS Deployment', ['migrate', 'cis', 'test/fixtures/migrate/cis-deployment.yaml'], 'f5', secret],
    ['CIS Helm values', ['migrate', 'cis', 'test/fixtures/migrate/cis-values.yaml'], 'f5', secret],
  ];
  for (const [what, args, type, byHand] of cases)
    it(`${what}: helm lint --strict and helm template take them; the controller and the ${type} adapter take the ConfigMap`, async (t) => {
      const dir = mkdtempSync(join(tmpdir(), 'npl-migrate-helm-'));
      t.after(() => rmSync(dir, { recursive: true, force: true }));
      const values = join(dir, 'values.yaml');
      writeFileSync(values, (await run(process.execPath, [...CLI, ...args], { cwd: ROOT })).stdout);
      // The credentials and the VIP ranges, as the notes ask.
      const sets = [...byHand, '--set', 'vip.cidrs={192.0.2.0/24}'];
      const lint = await run(helm, ['lint', CHART, '--strict', '-f', values, ...sets]);
      assert.match(lint.stdout, /1 chart\(s\) linted, 0 chart\(s\) failed/);
      const { stdout } = await run(helm, [
        'template',
        'r1',
        CHART,
        '--namespace',
        'npl-lb',
        '-f',
        values,
        ...sets,
      ]);
      const docs = parseAllDocuments(stdout).map(
        (d) => d.toJS() as { kind: string; data?: Record<string, string> },
      );
      const cm = docs.find((d) => d?.kind === 'ConfigMap')!;
      const config = parseControllerConfig(cm.data!['config.yaml']!, 'migrated ConfigMap');
      assert.equal(config.adapter.type, type);
      const adapter = makeAdapter({
        owner: config.clusterName,
        settings: config.adapter,
        env: {
          NPL_LB_AVI_USERNAME: 'u',
          NPL_LB_AVI_PASSWORD: 'p',
          NPL_LB_F5_USERNAME: 'u',
          NPL_LB_F5_PASSWORD: 'p',
        },
      });
      await adapter.close();
      if (type === 'avi') {
        assert.equal(config.serviceType, 'NodePortLocal');
        assert.equal(config.adapter.serviceEngineGroup, 'SEG-Prod');
        assert.deepEqual(config.adapter.vipNetwork, {
          name: 'vip-net',
          cidr: '10.20.30.0/24',
          cidr6: 'fd00:20:30::/64',
        });
      }
    });
});
