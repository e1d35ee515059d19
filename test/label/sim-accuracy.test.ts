import { beforeAll, describe, expect, it } from 'vitest';
import type { Problem } from '../../src/core/types.js';
import { binarySearchFirstError, estimateStepValues, type StepValues } from '../../src/label/estimate.js';
import { absQLabels, firstNegative } from '../../src/label/signals.js';
import { createPolicy } from '../../src/models/policy.js';
import { simProcessBenchRows } from '../../src/sim/dataset.js';
import { createSimModel } from '../../src/sim/model.js';
import { DEFAULT_SIM_OPTIONS } from '../../src/sim/options.js';
import { exactStepValues } from '../../src/sim/policy.js';
import { parseSimQuestion, solveSimProblem } from '../../src/sim/world.js';
import { checkSolution } from '../../src/verify/check.js';

/**
 * Acceptance 1 and 2 of the labeling issue, on simulated solutions (the sim world's exact step
 * values stand in for the truth; no real model is involved).
 *
 * Standard error: from the exact p, SE = sqrt(p(1−p)/M). Where p ∈ {0, 1} the estimate has no
 * variance (every rollout fails, or every one succeeds), so SE = 0 and the estimate must equal p
 * exactly to count as inside.
 */

const M = 32;
const rows = simProcessBenchRows({ count: 200, errorShare: 0.5 });
const problems: Problem[] = rows.map((r) => ({
  id: r.id,
  question: r.problem,
  answer: String(solveSimProblem(parseSimQuestion(r.problem)!)),
  domain: 'math',
  source: 'sim',
}));
const policy = createPolicy(createSimModel('sim'));

/** True when the estimate is within 4 standard errors of the exact value (exact match where SE = 0). */
function withinFourSe(estimate: number, p: number, rollouts: number): boolean {
  const se = Math.sqrt((p * (1 - p)) / rollouts);
  return se === 0 ? estimate === p : Math.abs(estimate - p) <= 4 * se;
}

describe('Monte Carlo step values on 200 simulated solutions (M = 32)', () => {
  let values: StepValues[];
  let exact: number[][];
  beforeAll(async () => {
    values = await Promise.all(
      rows.map((r, i) =>
        estimateStepValues(policy, checkSolution, problems[i], r.steps, { rollouts: M, seed: 7 }),
      ),
    );
    exact = rows.map((r) => exactStepValues(r.problem, r.steps, DEFAULT_SIM_OPTIONS));
  });

  it('at most 1% of chunk estimates lie outside 4 standard errors of the exact value', () => {
    let chunks = 0;
    let outside = 0;
    values.forEach((v, i) => {
      expect(v.q).toHaveLength(rows[i].steps.length + 1);
      for (let k = 1; k < v.q.length; k++) {
        chunks++;
        if (!withinFourSe(v.q[k], exact[i][k], M)) outside++;
      }
    });
    expect(chunks).toBeGreaterThan(1000);
    expect(outside / chunks).toBeLessThanOrEqual(0.01);
  });

  it('abs-q labels from Q̂ equal those from the exact values for at least 95% of chunks', () => {
    let chunks = 0;
    let same = 0;
    values.forEach((v, i) => {
      const fromEstimate = absQLabels(v.q);
      const fromExact = absQLabels(exact[i]);
      chunks += fromEstimate.length;
      same += fromEstimate.filter((x, k) => x === fromExact[k]).length;
    });
    expect(same / chunks).toBeGreaterThanOrEqual(0.95);
  });

  it('the empty prefix estimates the problem success rate', () => {
    const within = values.filter((v, i) => withinFourSe(v.q[0], exact[i][0], M)).length;
    expect(within / values.length).toBeGreaterThanOrEqual(0.99);
  });

  it('binary search finds the linear first error on ≥ 95% of solutions with ≥ 8 chunks, with ≤ half the rollouts', async () => {
    const long = rows.map((r, i) => ({ r, i })).filter(({ r }) => r.steps.length >= 8);
    expect(long.length).toBeGreaterThanOrEqual(50);
    let same = 0;
    let withError = 0;
    let linearRollouts = 0;
    let binaryRollouts = 0;
    for (const { r, i } of long) {
      const linear = firstNegative(absQLabels(values[i].q));
      if (linear >= 0) withError++;
      const found = await binarySearchFirstError(policy, checkSolution, problems[i], r.steps, {
        rollouts: M,
        seed: 7,
      });
      if (found.firstError === linear) same++;
      // Per solution, not only in total.
      expect(found.rollouts).toBeLessThanOrEqual(values[i].rollouts / 2);
      linearRollouts += values[i].rollouts;
      binaryRollouts += found.rollouts;
    }
    // The set must hold real first errors, or agreement on "−1" would say nothing.
    expect(withError).toBeGreaterThanOrEqual(long.length / 5);
    expect(same / long.length).toBeGreaterThanOrEqual(0.95);
    expect(binaryRollouts).toBeLessThanOrEqual(linearRollouts / 2);
  });
});
