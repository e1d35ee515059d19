import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createGenerativeJudge } from '../../src/judge/generative.js';
import { createPolicy } from '../../src/models/policy.js';
import { PROMPT_READERS } from '../../src/prompts/readers.js';
import { benchSearch } from '../../src/search/bench.js';
import { pairedDifference } from '../../src/search/paired.js';
import { runStrategy } from '../../src/search/registry.js';
import { simDatasetProblems } from '../../src/sim/dataset.js';
import { createSimModel } from '../../src/sim/model.js';
import { BIN } from '../support/cli.js';
import { tempDir } from '../support/temp.js';

/** The in-process sim, its policy and judge, counting the whole solutions the policy is asked for. */
function world() {
  const model = createSimModel('sim?step_error=0.2&sensitivity=0.9&specificity=0.9', PROMPT_READERS);
  const counts = { policySamples: 0 };
  const generate = model.generate.bind(model);
  const policyModel = {
    ...model,
    generate: (req: Parameters<typeof model.generate>[0], opts?: Parameters<typeof model.generate>[1]) => {
      counts.policySamples += req.n ?? 1;
      return generate(req, opts);
    },
  } as typeof model;
  return { policy: createPolicy(policyModel), judge: createGenerativeJudge(model), counts };
}

describe('paired by design: one pool of samples per problem (issue #27, item 3)', () => {
  const problems = simDatasetProblems(12, { seed: 3, stepError: 0.2 });

  it('plain sampling, best-of-1 and majority@1 return the same text, run separately', async () => {
    const { policy, judge } = world();
    for (const p of problems) {
      const sample = await runStrategy('sample', p, { seed: 5 }, { policy, judge });
      const bon1 = await runStrategy('best-of-n', p, { seed: 5, n: 1 }, { policy, judge });
      const maj1 = await runStrategy('majority', p, { seed: 5, n: 1 }, { policy, judge });
      expect(bon1.finalText, p.id).toBe(sample.finalText);
      expect(maj1.finalText, p.id).toBe(sample.finalText);
      // Best-of-1 has nothing to choose: no judge call.
      expect(bon1.cost.judge.calls).toBe(0);
    }
  });

  it('candidates are nested: the n=2 candidates are the first 2 of the n=4 pool, the n=4 the first 4 of n=8', async () => {
    const { policy, judge } = world();
    for (const p of problems.slice(0, 4)) {
      const texts = async (strategy: string, n: number) =>
        (await runStrategy(strategy, p, { seed: 9, n }, { policy, judge })).trace.map((t) => t.text);
      const four = await texts('best-of-n', 4);
      expect(await texts('best-of-n', 2)).toEqual(four.slice(0, 2));
      expect((await texts('weighted-vote', 8)).slice(0, 4)).toEqual(four);
      expect(await texts('majority', 4)).toEqual(four);
      // Candidates are numbered from 0, as stats.chosen is.
      const r = await runStrategy('best-of-n', p, { seed: 9, n: 4 }, { policy, judge });
      const chosen = r.trace.find((t) => t.status === 'accepted');
      expect(chosen?.label).toBe(`candidate ${r.stats.chosen}`);
    }
  });

  it('bench search draws N_max samples per problem, not Σn, and pairs every point with plain sampling', async () => {
    const { policy, judge, counts } = world();
    const report = await benchSearch({
      problems,
      specs: [
        { strategy: 'majority', budgets: [1, 2, 4] },
        { strategy: 'best-of-n', budgets: [1, 2, 4] },
        { strategy: 'weighted-vote', budgets: [4] },
      ],
      config: { seed: 1 },
      deps: { policy, judge },
      concurrency: 1,
    });
    // Plain sampling was added as the baseline; 4 samples per problem were drawn for 8 points.
    expect(report.points[0].strategy).toBe('sample');
    expect(counts.policySamples).toBe(4 * problems.length);
    expect(report.pool?.nMax).toBe(4);
    expect(report.pool?.samplesPerProblem).toBe(4);
    const bon4 = report.points.find((p) => p.strategy === 'best-of-n' && p.budget === 4)!;
    const maj4 = report.points.find((p) => p.strategy === 'majority' && p.budget === 4)!;
    // The pool's cost is the largest point's, not the sum of the points'.
    expect(report.pool?.costPerProblem.policyTokens).toBeCloseTo(bon4.costPerProblem.policyTokens, 6);
    expect(maj4.costPerProblem.policyTokens).toBeCloseTo(bon4.costPerProblem.policyTokens, 6);
    // Best-of-1 and majority@1 are plain sampling: a paired difference of exactly 0, no win, no loss.
    for (const p of report.points.filter((q) => q.budget === 1)) {
      expect(p.outcomes).toBe(report.points[0].outcomes);
      expect(p.paired).toMatchObject({ baseline: 'sample', problems: 12, difference: 0, wins: 0, losses: 0 });
    }
    expect(bon4.paired?.problems).toBe(12);
    expect(bon4.paired?.low).toBeLessThanOrEqual(bon4.paired!.difference);
    expect(bon4.paired?.high).toBeGreaterThanOrEqual(bon4.paired!.difference);
    const acc = (p: typeof bon4) => p.accuracy - report.points[0].accuracy;
    expect(bon4.paired?.difference).toBeCloseTo(acc(bon4), 10);
  });

  it('the 95% interval comes from the per-problem differences (Student t)', () => {
    const ids = ['a', 'b', 'c', 'd', 'e', 'f'];
    const base = new Map(ids.map((id, i) => [id, i < 3]));
    const other = new Map(ids.map((id, i) => [id, i < 5]));
    const d = pairedDifference(base, other);
    // Differences 0,0,0,1,1,0: mean 1/3, sd 0.5164, t(5) = 2.571 → half-width 0.542.
    expect(d.difference).toBeCloseTo(1 / 3, 10);
    expect(d.high! - d.difference).toBeCloseTo(0.542, 2);
    expect(d).toMatchObject({ wins: 2, losses: 0, problems: 6 });
  });

  it('`search --strategy sample` and `--strategy best-of-n --n 1` with one seed give the same text per problem (built CLI)', () => {
    const dir = tempDir('stepwise-paired-');
    const run = (strategy: string[], out: string) => {
      const r = spawnSync(
        process.execPath,
        [
          BIN,
          'search',
          '--dataset',
          'sim',
          '--count',
          '8',
          '--policy',
          'sim',
          '--judge',
          'sim:generative',
          '--seed',
          '4',
          ...strategy,
          '--out',
          out,
        ],
        {
          cwd: dir,
          encoding: 'utf8',
          timeout: 120_000,
          env: { ...process.env, STEPWISE_HOME: join(dir, '.stepwise'), STEPWISE_QUIET: '1' },
        },
      );
      expect(r.status, r.stderr).toBe(0);
      return readFileSync(join(dir, out), 'utf8')
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as { id: string; finalText: string });
    };
    const sample = run(['--strategy', 'sample'], 'sample.jsonl');
    const bon1 = run(['--strategy', 'best-of-n', '--n', '1'], 'bon1.jsonl');
    expect(sample).toHaveLength(8);
    expect(bon1.map((r) => [r.id, r.finalText])).toEqual(sample.map((r) => [r.id, r.finalText]));
  });
});
