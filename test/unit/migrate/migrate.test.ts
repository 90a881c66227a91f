/**
 * `npl-lb migrate ako|cis` (issue 35, item 5): AKO's values and CIS's flags (as flags, Helm values
 * or a Deployment) become npl-lb values; every setting is carried over or noted with why; secrets
 * are never printed; bad input is one line and exit code 2; any values file, however odd, gives a
 * result instead of a crash.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { parse } from 'yaml';
import { migrateAko } from '../../../adapters/avi/migrate/ako.ts';
import { migrateCis, parseCisArgs } from '../../../adapters/f5/migrate/cis.ts';
import { chartFlags, migrateCisDocument } from '../../../adapters/f5/migrate/cis-values.ts';
import { renderMigration } from '../../../src/migrate/result.ts';
import { runCli } from '../../support/cli-process.ts';

const FIXTURES = 'test/fixtures/migrate';
const notes = (m: ReturnType<typeof migrateAko>) =>
  m.notes.map((n) => `${n.from} (${n.kind}): ${n.why}`).join('\n');

describe('npl-lb migrate ako', () => {
  it("carries AKO's settings over and notes the rest", async () => {
    const { code, stdout } = await runCliOut(['migrate', 'ako', `${FIXTURES}/ako-values.yaml`]);
    assert.equal(code, 0);
    const values = parse(stdout) as Record<string, unknown>;
    assert.deepEqual(values.adapter, {
      type: 'avi',
      avi: {
        vipNetwork: { name: 'vip-net', cidr: '10.20.30.0/24', cidr6: 'fd00:20:30::/64' },
        serviceEngineGroup: 'SEG-Prod',
        controllerVersion: '22.1.3',
        cloud: 'vcenter-prod',
        url: 'https://avi.example.internal',
        tenant: 'team-a',
      },
    });
    assert.equal(values.clusterName, 'prod-cluster-01');
    assert.equal(values.serviceType, 'NodePortLocal');
    // Beside a running AKO: neither every LoadBalancer Service nor the default class, each said.
    assert.equal(values.defaultLoadBalancer, false, 'never every LoadBalancer Service beside AKO');
    assert.deepEqual(values.namespaces, { exclude: ['kube-system', 'kube-public'] });
    assert.equal(values.ingressClass, undefined, 'never the default class beside AKO');
    assert.match(stdout, /defaultLoadBalancer: false\); set it true once AKO is gone/);
    assert.match(stdout, /set ingressClass\.default: true once AKO is gone/);
    assert.equal(values.logLevel, 'warn');
    assert.deepEqual(values.credentials, { username: 'ako-user' });
    assert.ok(!stdout.includes('do-not-print-me'), 'the password is never printed');
    for (const said of [
      /AKOSettings\.clusterName \(changed\): .*"Prod_Cluster-01" became prod-cluster-01/,
      /AKOSettings\.namespaceSelector \(by hand\): .*ako=enabled/,
      /NetworkSettings\.vipNetworkList \(no equivalent\): .*vip-net-b left out/,
      /L7Settings\.shardVSSize \(no equivalent\)/,
      /avicredentials\.password \(by hand\): not printed/,
      /^# {3}image, securityContext, podSecurityContext, rbac, persistentVolumeClaim, mountPath, logFile \(no equivalent\)/m,
    ])
      assert.match(stdout, said);
  });

  it('a layer7Only AKO serves no LoadBalancer Service without the class; missing settings are asked for', () => {
    const m = migrateAko({
      AKOSettings: { layer7Only: 'true' },
      L7Settings: { serviceType: 'ClusterIP' },
      Unknown: 1,
    });
    assert.equal(m.values.defaultLoadBalancer, false);
    assert.equal(m.values.serviceType, 'ClusterIP');
    assert.match(
      notes(m),
      /L7Settings\.serviceType \(changed\): ClusterIP mode needs the Pod network routable/,
    );
    assert.match(notes(m), /AKOSettings\.clusterName \(by hand\): not set/);
    assert.match(notes(m), /ControllerSettings\.controllerHost \(by hand\)/);
    assert.match(notes(m), /NetworkSettings\.vipNetworkList \(by hand\)/);
    assert.match(notes(m), /Unknown \(no equivalent\): not an AKO setting npl-lb knows/);
  });

  it('a CA in AKO values becomes the caBundle, base64 or PEM; anything else is asked for', () => {
    const pem = '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----';
    for (const data of [pem, Buffer.from(pem).toString('base64')])
      assert.equal(
        (
          migrateAko({ avicredentials: { certificateAuthorityData: data } }).values.adapter as {
            avi: { caBundle: string };
          }
        ).avi.caBundle,
        pem,
      );
    assert.match(
      notes(migrateAko({ avicredentials: { certificateAuthorityData: 'junk' } })),
      /not a PEM certificate/,
    );
  });

  it('any values file gives values and notes, never a crash', () => {
    fc.assert(
      fc.property(
        fc.dictionary(
          fc.constantFrom(
            'AKOSettings',
            'NetworkSettings',
            'L7Settings',
            'ControllerSettings',
            'avicredentials',
            'x',
          ),
          fc.anything(),
        ),
        (input) => {
          // Values or a one-line refusal (nothing of AKO in it): never a crash.
          let m: ReturnType<typeof migrateAko>;
          try {
            m = migrateAko(input);
          } catch (err) {
            assert.match(String((err as Error).message), /holds no AKO setting/);
            return;
          }
          assert.equal((m.values.adapter as { type: string }).type, 'avi');
          parse(renderMigration(m, 'fuzz'));
        },
      ),
      { numRuns: 300, seed: 35 },
    );
  });
});

describe('npl-lb migrate cis', () => {
  it('flags in every form CIS takes them: --a=b, --a b, a bare --flag, a repeated one', () => {
    assert.deepEqual(parseCisArgs(['--a=b', '--c', 'd', '--e', '--n=x', '--n', 'y', 'stray']), [
      ['a', 'b'],
      ['c', 'd'],
      ['e', 'true'],
      ['n', 'x'],
      ['n', 'y'],
    ]);
    // As CIS's chart renders them: '_' for '-', one --namespace each, the class name as a flag.
    assert.deepEqual(
      chartFlags({
        ingressClass: { ingressClassName: 'f5' },
        args: { bigip_url: 'u', bigip_partition: 'p', skipped: null, namespaces: ['a', 'b'] },
      }),
      ['--ingress-class=f5', '--bigip-url=u', '--bigip-partition=p', '--namespace=a', '--namespace=b'],
    );
    assert.equal(migrateCisDocument({ kind: 'ConfigMap', data: {} }), undefined);
  });

  it('a Deployment: its container args carried over, secrets from the environment asked for', async () => {
    const { code, stdout } = await runCliOut(['migrate', 'cis', `${FIXTURES}/cis-deployment.yaml`]);
    assert.equal(code, 0);
    const values = parse(stdout) as Record<string, unknown>;
    assert.deepEqual(values.adapter, {
      type: 'f5',
      // Never CIS's own partition (k8s_prod): npl-lb declares its own tenant, said.
      f5: { url: 'https://192.0.2.45', insecureSkipVerify: true },
    });
    assert.equal(values.serviceType, 'NodePortLocal');
    assert.deepEqual(values.namespaces, { include: ['shop', 'payments'] });
    // CIS's classes stay CIS's: npl-lb keeps its own, never every LoadBalancer Service beside CIS.
    assert.equal(values.loadBalancerClass, undefined);
    assert.equal(values.defaultLoadBalancer, false);
    assert.equal(values.ingressClass, undefined);
    assert.match(stdout, /--ingress-class \(changed\): CIS's IngressClass stays CIS's/);
    assert.match(stdout, /--load-balancer-class \(changed\): CIS's loadBalancerClass stays CIS's/);
    assert.equal(values.clusterName, 'k8s-prod');
    assert.match(stdout, /CIS's partition k8s_prod stays CIS's: npl-lb declares its own, npl_lb_k8s_prod/);
    for (const said of [
      /--bigip-username \(by hand\)/,
      /--ipam \(changed\)/,
      /--some-future-flag \(no equivalent\): not a CIS flag/,
      /vip\.cidrs \(by hand\)/,
    ])
      assert.match(stdout, said);
  });

  it('Helm values, and flags after --', async () => {
    const values = parse(
      (await runCliOut(['migrate', 'cis', `${FIXTURES}/cis-values.yaml`])).stdout,
    ) as Record<string, unknown>;
    assert.equal(values.serviceType, 'NodePort');
    assert.equal(values.clusterName, 'cluster-a');
    const flags = await runCliOut([
      'migrate',
      'cis',
      '--',
      '--bigip-url=bigip.example',
      '--bigip-password=hunter2',
      '--pool-member-type=auto',
    ]);
    assert.equal(flags.code, 0);
    assert.ok(!flags.stdout.includes('hunter2'), 'the password is never printed');
    assert.match(flags.stdout, /--pool-member-type \(changed\): auto has no equivalent/);
    assert.match(flags.stdout, /--bigip-partition \(by hand\): not given/);
    const m = migrateCis(['--bigip-partition=p']);
    assert.match(notes(m), /--bigip-url \(by hand\)/);
  });

  it("is safe on a live estate: never CIS's partition, no second NodePortLocal agent where Antrea runs, another tool's or a placeholder's input refused", () => {
    const npl = migrateCis([
      '--bigip-url=https://bigip.example',
      '--bigip-partition=k8s',
      '--pool-member-type=nodeportlocal',
    ]);
    assert.equal((npl.values.adapter as { f5: { tenant?: string } }).f5.tenant, undefined);
    assert.deepEqual(npl.values.agent, { enabled: false });
    assert.match(notes(npl), /Antrea's NodePortLocal already runs here/);
    for (const [args, why] of [
      [['--bigip-partition=<name_of_partition>'], /is a placeholder of a sample/],
      [['--bigip-partition=Common'], /not a BIG-IP partition name/],
      [['--bigip-partition=a b'], /not a BIG-IP partition name/],
      [['--bigip-url=ftp://x'], /not an http\(s\) URL/],
      [['--bigip-url=https://<bigip-ip>'], /placeholder|not a URL/],
      [['--foo=bar'], /holds no CIS flag/],
      [[], /holds no CIS flag/],
    ] as [string[], RegExp][])
      assert.throws(() => migrateCis(args), why, args.join(' '));
    const ako = migrateAko({ AKOSettings: { cniPlugin: 'antrea', clusterName: 'c' } });
    assert.deepEqual(ako.values.agent, { enabled: false });
    assert.throws(() => migrateAko({ foo: 'bar' }), /holds no AKO setting/);
    // Upstream samples' placeholders and addresses that are not addresses: refused, never values.
    for (const [values, why] of [
      [
        { AKOSettings: { clusterName: '<cluster-name>' } },
        /AKOSettings\.clusterName="<cluster-name>" is a placeholder/,
      ],
      [
        { NetworkSettings: { vipNetworkList: [{ networkName: '<vip-network>' }] } },
        /vipNetworkList=.*placeholder/,
      ],
      [{ ControllerSettings: { controllerHost: 'ftp://avi' } }, /controllerHost="ftp:\/\/avi": not a host/],
      [{ ControllerSettings: { controllerHost: 'avi controller' } }, /not a host/],
      [{ ControllerSettings: { tenantName: '${TENANT}' } }, /tenantName="\$\{TENANT\}" is a placeholder/],
    ] as [Record<string, unknown>, RegExp][])
      assert.throws(() => migrateAko(values), why, JSON.stringify(values));
    assert.throws(
      () => migrateCis(['--bigip-url=https://b', '--namespace=<ns>']),
      /--namespace="<ns>" is a placeholder/,
    );
    assert.throws(
      () => migrateCisDocument({ bigip_login_secret: '<secret-name>', args: { bigip_url: 'https://b' } }),
      /bigip_login_secret="<secret-name>" is a placeholder/,
    );
    assert.throws(() => migrateAko({ args: { bigip_url: 'x' } }), /holds no AKO setting/);
  });
});

describe('npl-lb migrate: bad input is one line, exit code 2 (3 past a limit)', () => {
  it('no such file, not YAML, not a mapping, nothing CIS in it, an unknown source, no arguments', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'npl-migrate-'));
    try {
      writeFileSync(join(dir, 'bad.yaml'), 'a: [unclosed\n');
      writeFileSync(join(dir, 'list.yaml'), '- a\n- b\n');
      writeFileSync(join(dir, 'cm.yaml'), 'kind: ConfigMap\ndata: {}\n');
      const cases: [string[], RegExp][] = [
        [['migrate', 'ako', join(dir, 'missing.yaml')], /cannot read .*missing\.yaml.*\[NPL_FLAG_INVALID\]$/],
        [['migrate', 'ako', join(dir, 'bad.yaml')], /is not valid YAML.*\[NPL_CONFIG_INVALID\]$/],
        [['migrate', 'ako', join(dir, 'list.yaml')], /is not a values file.*\[NPL_CONFIG_INVALID\]$/],
        [['migrate', 'cis', join(dir, 'cm.yaml')], /holds neither CIS Helm values.*\[NPL_CONFIG_INVALID\]$/],
        [['migrate', 'nginx', 'x'], /migrate from "nginx": ako or cis.*\[NPL_FLAG_INVALID\]$/],
        [['migrate', 'ako'], /takes one file.*\[NPL_FLAG_INVALID\]$/],
      ];
      for (const [args, said] of cases) {
        const r = await runCli(args);
        assert.equal(r.code, 2, args.join(' '));
        assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
        assert.match(r.stderr.trim(), said);
      }
      // Issue 46: past a limit (aliases that expand, nesting, a key twice) is one line too, exit 3
      // for the limits (a "billion laughs" printed a ReferenceError with ten stack frames).
      const laughs = [
        'a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]',
        ...'bcdefghi'
          .split('')
          .map((k, i) => `${k}: &${k} [${Array(9).fill(`*${'abcdefghi'[i]}`).join(',')}]`),
      ].join('\n');
      writeFileSync(join(dir, 'laughs.yaml'), laughs);
      writeFileSync(join(dir, 'deep.yaml'), `AKOSettings: ${'['.repeat(5000)}${']'.repeat(5000)}\n`);
      writeFileSync(join(dir, 'dup.yaml'), 'AKOSettings: {clusterName: a}\nAKOSettings: {clusterName: b}\n');
      const limits: [string, number, RegExp][] = [
        ['laughs.yaml', 3, /aliases expand past .*\[NPL_INPUT_LIMIT\]$/],
        ['deep.yaml', 3, /nested deeper than 1000 levels.*\[NPL_INPUT_LIMIT\]$/],
        ['dup.yaml', 2, /map keys must be unique.*\[NPL_CONFIG_INVALID\]$/],
      ];
      for (const [file, code, said] of limits)
        for (const from of ['ako', 'cis']) {
          const r = await runCli(['migrate', from, join(dir, file)]);
          assert.equal(r.code, code, `${from} ${file}: ${r.stderr}`);
          assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
          assert.match(r.stderr.trim(), said);
        }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

/** Runs `npl-lb` and resolves with its exit code and stdout. */
async function runCliOut(args: string[]): Promise<{ code: number; stdout: string }> {
  const { run, CLI, ROOT } = await import('../../support/cli-process.ts');
  return run(process.execPath, [...CLI, ...args], { cwd: ROOT }).then(
    (r) => ({ code: 0, stdout: r.stdout }),
    (e: { code: number; stdout: string }) => ({ code: e.code, stdout: e.stdout }),
  );
}
