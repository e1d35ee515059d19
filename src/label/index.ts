/**
 * Rollout labeling (METHODS §2): Monte Carlo step values Q̂ from policy rollouts, the Abs-Q,
 * Rel-Ratio, Rel-Effective, Math-Shepherd and SORM labels, first errors, OmegaPRM's binary
 * first-error search, and the resumable `stepwise label` job. See docs/label.md.
 */
export { balanceByPrefixLength, type PrefixExample, prefixExamples } from './balance.js';
export {
  type AnswerChecker,
  binarySearchFirstError,
  bisectFirstFalse,
  type CheckResult,
  checkedFullSolution,
  createPrefixMemo,
  type EarlyStopOptions,
  estimatePrefixValue,
  estimateStepValues,
  type FirstErrorSearch,
  type PrefixEstimate,
  type PrefixMemo,
  prefixSeed,
  type RolloutOptions,
  type StepValues,
  type TaskLimiter,
} from './estimate.js';
export { readLabelInput } from './input.js';
export {
  type LabelJobOptions,
  type LabelOutputFormat,
  type LabelSummary,
  labelsSidecarPath,
  runLabelJob,
  type SignalSummary,
  summarizeSignals,
} from './job.js';
export {
  type KeptRollout,
  type LabeledChunkRecord,
  type LabeledSolutionRecord,
  type LabelOptions,
  type LabelResult,
  labelSolution,
  type ProcessBenchRow,
  type SearchMode,
  type SolutionToLabel,
  toProcessBenchRow,
  validateLabelOptions,
} from './label.js';
export * from './signals.js';
