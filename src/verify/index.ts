/** Math answer checking: extraction of final answers and grader-compatible equivalence. */

export {
  type EquivalenceCase,
  type EquivalenceCaseReport,
  judgeEquivalenceCase,
  loadEquivalenceCases,
  scoreEquivalenceCases,
} from './cases.js';
export { checkMathAnswer } from './check.js';
export {
  type EquivalenceExplanation,
  type EquivalenceMethod,
  type EquivalenceOptions,
  explainEquivalence,
  isEquivalent,
} from './equivalence.js';
export { extractAnswer, findBoxed } from './extract.js';
export { type NormalizedAnswer, normalizeAnswer } from './normalize.js';
export { warmUpEngines as warmUpVerifier } from './numeric.js';
