/** Math answer checking: extraction of final answers and grader-compatible equivalence. */
export { checkMathAnswer, checkSolution, type SolutionCheck } from './check.js';
export {
  type EquivalenceExplanation,
  type EquivalenceOptions,
  explainEquivalence,
  isEquivalent,
} from './equivalence.js';
export { extractAnswer, findBoxed } from './extract.js';
