/**
 * Issue 49: every setting AKO and CIS publish (test/fixtures/migrate/published-settings.yaml: AKO's
 * values at four versions, CIS's flags at three, the keys of CIS's charts) goes through `npl-lb
 * migrate` and is either carried over (the values change) or named in a note of its own (not the
 * catch-all for a setting npl-lb does not know). Each is run alone beside a fixed base, so a setting
 * that changes nothing and says nothing fails here by name.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { parse } from 'yaml';
import { z } from 'zod';
import { migrateAko } from '../../../adapters/avi/migrate/ako.ts';
import { migrateCis } from '../../../adapters/f5/migrate/cis.ts';
import { migrateCisDocument } from '../../../adapters/f5/migrate/cis-values.ts';
import type { Migration } from '../../../src/migrate/result.ts';

const published = z
  .object({
    ako: z.record(z.string(), z.record(z.string(), z.unknown())),
    cisFlags: z.record(z.string(), z.array(z.string())),
    cisFlagValues: z.record(z.string(), z.string()),
    cisChart: z.record(z.string(), z.record(z.string(), z.unknown())),
  })
  .parse(
    parse(readFileSync(new URL('../../fixtures/migrate/published-settings.yaml', import.meta.url), 'utf8')),
  );

/** `{a: {b: v}}` for `a.b` (keys with dashes stay whole). */
function nested(path: string, value: unknown): Record<string, unknown> {
  return path
    .split('.')
    .reverse()
    .reduce<unknown>((inner, key) => ({ [key]: inner }), value) as Record<string, unknown>;
}

/** Deep merge of plain objects, b over a. */
function merge(a: Record<string, unknown>, b: Record<string, unknown>): Record<string, unknown> {
  const out = { ...a };
  for (const [k, v] of Object.entries(b)) {
    const av = out[k];
    out[k] =
      typeof av === 'object' && av !== null && !Array.isArray(av) && typeof v === 'object' && v !== null
        ? merge(av as Record<string, unknown>, v as Record<string, unknown>)
        : v;
  }
  return out;
}

const UNKNOWN = /^not (an AKO setting|a CIS flag|a key of CIS's Helm chart) npl-lb knows$/;

/**
 * The setting, run beside the base, is carried (the values differ from the base's) or said (a note
 * of its own, or the base's notes changed by it); never the catch-all for an unknown setting.
 */
function assertCarriedOrSaid(setting: string, base: Migration, run: Migration): string[] {
  const problems: string[] = [];
  const unknown = run.notes.filter((n) => UNKNOWN.test(n.why));
  if (unknown.length > 0)
    problems.push(`${setting}: ${unknown.map((n) => `${n.from}: ${n.why}`).join('; ')}`);
  const changed =
    JSON.stringify(run.values) !== JSON.stringify(base.values) ||
    JSON.stringify(run.notes) !== JSON.stringify(base.notes);
  if (!changed) problems.push(`${setting}: neither carried over nor named in a note`);
  return problems;
}

describe('npl-lb migrate: every published AKO and CIS setting is carried over or named in a note', () => {
  it("AKO's values at four versions", () => {
    const baseInput = { replicaCount: 1 };
    const base = migrateAko(baseInput);
    const problems: string[] = [];
    let count = 0;
    for (const [version, settings] of Object.entries(published.ako))
      for (const [key, value] of Object.entries(settings)) {
        count++;
        const run = migrateAko(merge(baseInput, nested(key, value)));
        problems.push(...assertCarriedOrSaid(`${version}: ${key}`, base, run).map((p) => p));
      }
    assert.ok(count > 250, `the fixture's settings (${count})`);
    assert.deepEqual(problems, []);
  });

  it("CIS's flags at three versions, each as a flag after the others", () => {
    const baseArgs = ['--log-level=INFO'];
    const base = migrateCis(baseArgs);
    const problems: string[] = [];
    for (const [version, flags] of Object.entries(published.cisFlags))
      for (const flag of flags) {
        const value = published.cisFlagValues[flag] ?? published.cisFlagValues.default!;
        const run = migrateCis([...baseArgs, `--${flag}=${value}`]);
        problems.push(...assertCarriedOrSaid(`${version}: --${flag}`, base, run));
      }
    assert.deepEqual(problems, []);
  });

  it("CIS's Helm chart keys, read from a values file as the chart renders them", () => {
    const baseInput = { args: { bigip_url: 'https://bigip.example' } };
    const base = migrateCisDocument(baseInput)!;
    const problems: string[] = [];
    for (const [version, keys] of Object.entries(published.cisChart))
      for (const [key, value] of Object.entries(keys)) {
        const run = migrateCisDocument(merge(baseInput, nested(key, value)))!;
        problems.push(...assertCarriedOrSaid(`${version}: ${key}`, base, run));
      }
    assert.deepEqual(problems, []);
  });

  it('the checks fail where they should: a setting nobody knows, and one a rule drops silently', () => {
    const base = migrateAko({ replicaCount: 1 });
    assert.match(
      assertCarriedOrSaid(
        'x',
        base,
        migrateAko({ replicaCount: 1, AKOSettings: { someFutureSetting: 'x' } }),
      )[0]!,
      /not an AKO setting npl-lb knows/,
    );
    // replicaCount 1 is carried as npl-lb's own default: the same output as the base, so the check
    // names it (the fixture gives every setting a value other than its default).
    assert.match(assertCarriedOrSaid('replicaCount', base, migrateAko({ replicaCount: 1 }))[0]!, /neither/);
  });
});
