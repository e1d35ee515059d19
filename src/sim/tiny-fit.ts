import type { SimOptions } from './options.js';

/**
 * The simulated world's search knobs fitted to the tiny world's measured statistics (docs/sim.md,
 * "Fitted to the tiny world"). Search gains come from two things the sim sets by hand: whether a
 * second attempt at a chunk errs again after a first one erred (error correlation between
 * attempts from one prefix) and how well the judge tells a wrong chunk from a right one. The
 * defaults (independent-ish slips, a 0.9/0.9 judge) made chunk-reset look 15–19 points better
 * than plain sampling, where the tiny networks measured 2.0 to 7.7 points below it with each
 * honest judge (the committed one −4.3 and −3.7 on two seeds; docs/tiny.md, "Search with each
 * judge"). `demo --sim` uses these values.
 *
 * Measured on the tiny world (real networks, exact truth used only to score):
 * - attempts: `python3 -m tiny.attempts` — 2,152 temperature-1 attempts at 538 chunks of 300
 *   validation problems, 4 per prefix: error rate 0.199, P(another attempt wrong | one wrong)
 *   0.611 (3.1× the rate), the same text in 0.536 of wrong pairs;
 * - judge: `python3 -m tiny.truth judge-chunks` on the honest judge's ProcessBench predictions
 *   (526 chunks: sensitivity 0.559, specificity 0.653; 0 replies of 550 without a verdict;
 *   docs/tiny.md, "The judge").
 *
 * Fit: in the sim a trap step errs with probability ρ on every attempt, to the same wrong number;
 * with a share μ of the step-error rate r from traps, P(another attempt wrong | one wrong) ≈ μρ
 * plus a slip term of order r. μ = 0.7, ρ = 0.85 give 0.61 at the sim's r = 0.1 (0.605 by the
 * formula), the tiny world's value. The judge's rates are the honest judge's, its format
 * failures included; errors grow with difficulty as in the default sim (g = 1).
 */
export const TINY_FIT: Readonly<Pick<SimOptions, 'misconception' | 'recur'>> & {
  judge: Readonly<Pick<SimOptions, 'sensitivity' | 'specificity' | 'formatFailure' | 'judgeDifficulty'>>;
} = Object.freeze({
  misconception: 0.7,
  recur: 0.85,
  judge: Object.freeze({ sensitivity: 0.56, specificity: 0.65, formatFailure: 0, judgeDifficulty: 1 }),
});
