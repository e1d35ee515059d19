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
