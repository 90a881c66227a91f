/**
 * The benches in a short profile, judged on counts, not on time (the machines are shared): the
 * agent on real iptables maps a burst of Pods in at most 3 restores, where one call per rule
 * spawns a process per rule; the controller against a 100 ms device overlaps device calls, so a
 * change sent while an unrelated call is in flight does not wait for it, and a pool is still
 * written at most once per 100 ms. A regression to per-rule iptables or to passes in series fails
 * here.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { nodeArgs, run, ROOT } from '../support/cli-process.ts';
import { netnsUnavailable } from '../support/netns.ts';

const jsonLines = (out: string): Record<string, unknown>[] =>
  out
    .split('\n')
    .filter((l) => l.startsWith('JSON '))
    .map((l) => JSON.parse(l.slice(5)) as Record<string, unknown>);

describe('benches, short profile', () => {
  it(
    'bench:agent: a burst of 60 Pods on real iptables in at most 3 restores, against 60 processes per rule',
    {
      skip: netnsUnavailable(),
      timeout: 240_000,
    },
    async () => {
      const { stdout } = await run(process.execPath, nodeArgs('bench/agent/run.ts'), {
        cwd: ROOT,
        // The comparison's 120 processes a burst are timed once, not three times: it only shows
        // what batching saves.
        env: { ...process.env, ONLY_IPTABLES: '1', BENCH_PODS: '60', BENCH_PER_RULE_RUNS: '1' },
        timeout: 230_000,
      });
      const [batched, perRule] = jsonLines(stdout) as {
        label: string;
        bursts: { restores: number; processes: number }[];
      }[];
      assert.match(batched!.label, /one restore per burst/);
      assert.equal(batched!.bursts.length, 3);
      for (const b of batched!.bursts) {
        assert.ok(b.restores >= 1 && b.restores <= 3, `restores per burst: ${b.restores}`);
        assert.equal(b.processes, b.restores);
      }
      assert.match(perRule!.label, /one call per rule/);
      assert.equal(perRule!.bursts.length, 1);
      for (const b of perRule!.bursts)
        assert.equal(b.processes, 60, 'the comparison really spawns one per rule');
    },
  );

  it(
    'bench:controller at 100 ms per device call: calls overlap, changes do not wait behind unrelated ones, one write per pool per 100 ms',
    {
      timeout: 240_000,
    },
    async (t) => {
      const { stdout } = await run(
        process.execPath,
        [
          ...nodeArgs('bench/controller/run.ts'),
          '--pods',
          '400',
          '--services',
          '40',
          '--seconds',
          '4',
          '--latency',
          '100',
          '--skip-rss',
        ],
        { cwd: ROOT, timeout: 230_000 },
      );
      const [r] = jsonLines(stdout) as {
        applied: number;
        total: number;
        neverApplied: number;
        maxPer100: number;
        maxOverlap: number;
        behindCandidates: number;
        waitedBehind: number;
        starved: number;
      }[];
      assert.ok(r, stdout);
      assert.equal(r.neverApplied, 0);
      assert.equal(r.applied, r.total);
      assert.ok(r.maxPer100 <= 1, `writes to one pool within 100 ms: ${r.maxPer100}`);
      assert.ok(r.maxOverlap >= 2, `device calls at once: ${r.maxOverlap}`);
      assert.ok(r.behindCandidates >= 10, `changes sent while calls were in flight: ${r.behindCandidates}`);
      // Judged where the bench's process ran: a change whose process was held off the CPU for half
      // a device call meanwhile, in all (a loaded machine: clean-clone runs had 46 of 51, 75 of
      // 129 and 14 of 24 "waiting", the same code 0-2 of 50 alone), says nothing of the
      // scheduler, and is not judged.
      // At most half of the rest: passes in series make nearly every one wait (227 of 227 with one
      // device slot), and a loaded run's residue stays under it (6 of 20, 9 of 33 seen).
      const judged = r.behindCandidates - r.starved;
      if (judged >= 10)
        assert.ok(
          r.waitedBehind <= judged / 2,
          `${r.waitedBehind} of ${judged} waited for unrelated calls (passes in series; ${r.starved} not judged)`,
        );
      else t.diagnostic(`too loaded to judge: ${r.starved} of ${r.behindCandidates} changes stalled`);
    },
  );
});
