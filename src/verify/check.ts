import { StepwiseError } from '../core/errors.js';
import { type CodeProblemLike, checkCodeSolution } from './code/tasks.js';
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
  problem: { domain: 'math' | 'code'; answer: string } & CodeProblemLike,
  solutionText: string,
): Promise<SolutionCheck> {
  if (problem.domain === 'math') return checkMathAnswer(problem.answer, solutionText);
  if (problem.domain === 'code') {
    // Code: run the problem's tests in the sandbox (src/verify/code).
    const { answer, correct } = await checkCodeSolution(problem, solutionText);
    return { answer, correct };
  }
  throw new StepwiseError(`cannot check solutions of domain "${String(problem.domain)}"`);
}
