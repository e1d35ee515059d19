import { beforeAll, describe, expect, it } from 'vitest';
import type { Problem } from '../../src/core/types.js';
import { binarySearchFirstError, estimateStepValues, type StepValues } from '../../src/label/estimate.js';
import { absQLabels, firstNegative } from '../../src/label/signals.js';
import { createPolicy } from '../../src/models/policy.js';
import { PROMPT_READERS } from '../../src/prompts/readers.js';
import { simProcessBenchRows } from '../../src/sim/dataset.js';
import { createSimModel } from '../../src/sim/model.js';
import { DEFAULT_SIM_OPTIONS, type SimOptions } from '../../src/sim/options.js';
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
/**
 * The simulated world these figures were measured in, spelled out: the sim's defaults may change
 * (they did: correlated errors), and the agreement bars below hold for this world.
 */
const WORLD: SimOptions = {
  ...DEFAULT_SIM_OPTIONS,
  seed: 0,
  minSteps: 3,
  maxSteps: 12,
  stepError: 0.1,
  difficultySpread: 1,
  misconception: 0.5,
  recur: 0.7,
  checkRate: 0.15,
  catchRate: 0.5,
  restateRate: 0.15,
};
const rows = simProcessBenchRows({ count: 200, errorShare: 0.5 }, WORLD);
const problems: Problem[] = rows.map((r) => ({
  id: r.id,
  question: r.problem,
  answer: String(solveSimProblem(parseSimQuestion(r.problem)!)),
  domain: 'math',
  source: 'sim',
}));
const policy = createPolicy(createSimModel(WORLD, PROMPT_READERS));

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
    exact = rows.map((r) => exactStepValues(r.problem, r.steps, WORLD));
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
    // Printed so docs/label.md can quote the figure (simulated world).
    console.log(`simulated: ${outside} of ${chunks} chunk estimates outside 4 SE`);
    expect(outside / chunks).toBeLessThanOrEqual(0.01);
  });

  /**
   * Agreement of a labeller's abs-q labels with those of the exact values: over every chunk, and
   * over the chunks that are exactly negative (Q = 0) — a labeller that calls every chunk positive
   * scores high overall when most chunks are good, but 0 on those.
   */
  function agreement(labeller: (v: StepValues, i: number) => boolean[]) {
    let chunks = 0;
    let same = 0;
    let negatives = 0;
    let negativesFound = 0;
    values.forEach((v, i) => {
      const labels = labeller(v, i);
      const fromExact = absQLabels(exact[i]);
      chunks += fromExact.length;
      fromExact.forEach((truth, k) => {
        if (labels[k] === truth) same++;
        if (!truth) {
          negatives++;
          if (labels[k] === false) negativesFound++;
        }
      });
    });
    return { overall: same / chunks, negatives, onNegatives: negativesFound / negatives };
  }
  const passes = (a: ReturnType<typeof agreement>) => a.overall >= 0.99 && a.onNegatives >= 0.95;

  it('abs-q labels from Q̂ agree with the exact ones on ≥ 99% of chunks and ≥ 95% of the exactly negative ones', () => {
    const a = agreement((v) => absQLabels(v.q));
    // Printed so docs/label.md can quote the figures (simulated world).
    console.log(
      `simulated: abs-q labels agree on ${(100 * a.overall).toFixed(1)}% of chunks, ${(100 * a.onNegatives).toFixed(1)}% of ${a.negatives} exactly negative ones`,
    );
    // Enough negatives for the floor to mean something.
    expect(a.negatives).toBeGreaterThanOrEqual(50);
    expect(a.overall).toBeGreaterThanOrEqual(0.99);
    expect(a.onNegatives).toBeGreaterThanOrEqual(0.95);
    expect(passes(a)).toBe(true);
  });

  it('the same bar fails a labeller that calls every chunk positive, and one that calls every chunk negative', () => {
    const allPositive = agreement((v) => absQLabels(v.q).map(() => true));
    expect(allPositive.onNegatives).toBe(0);
    expect(passes(allPositive)).toBe(false);
    const allNegative = agreement((v) => absQLabels(v.q).map(() => false));
    expect(passes(allNegative)).toBe(false);
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
