import { StepwiseError } from '../core/errors.js';
import { type EquivalenceOptions, isEquivalent } from './equivalence.js';
import { extractAnswer } from './extract.js';

/** Extract the final answer of `solutionText` and compare it with `gold`. Never throws. */
export function checkMathAnswer(
  gold: string,
  solutionText: string,
  options?: EquivalenceOptions,
): { answer: string | null; correct: boolean } {
  const answer = extractAnswer(solutionText);
  return { answer, correct: answer !== null && isEquivalent(gold, answer, options) };
}

/** The verdict on one solution: its extracted final answer (null when none) and whether it is right. */
export interface SolutionCheck {
  answer: string | null;
  correct: boolean;
}

/**
 * Check a solution against its problem, whatever the domain: the one call point bulk sampling,
 * labeling and evaluation use. Math: final-answer equivalence with the gold answer. Async so a
 * domain whose checker runs tests in a sandbox (code) plugs in here.
 */
export async function checkSolution(
  problem: { domain: 'math' | 'code'; answer: string },
  solutionText: string,
): Promise<SolutionCheck> {
  if (problem.domain === 'math') return checkMathAnswer(problem.answer, solutionText);
  throw new StepwiseError(
    `checking ${problem.domain} solutions needs the code checker (src/verify/code), which does not handle them in this build`,
  );
}
