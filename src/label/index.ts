/**
 * Rollout labeling (METHODS §2): Monte Carlo step values Q̂ from policy rollouts, the Abs-Q,
 * Rel-Ratio, Rel-Effective, Math-Shepherd and SORM labels, first errors, OmegaPRM's binary
 * first-error search, and the resumable `stepwise label` job. See docs/label.md.
 */
export { balanceByPrefixLength, type PrefixExample, prefixExamples } from './balance.js';
export {
  DEFAULT_EARLY_STOP_BATCH,
  DEFAULT_LABEL_CONFIG,
  earlyStopBatch,
  LABEL_CONFIG_KEYS,
  LABEL_RUN_ONLY_KEYS,
  type LabelCacheMode,
  type LabelConfig,
  type LabelConfigContext,
  labelJobSettings,
  labelRowSettings,
  resolveLabelConfig,
  signalParamsOf,
} from './config.js';
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
  type LabelResult,
  type LabelRuntime,
  labelConfigFor,
  labelSolution,
  type ProcessBenchRow,
  rolloutOptionsOf,
  type SearchMode,
  type SolutionToLabel,
  toProcessBenchRow,
} from './label.js';
export * from './signals.js';
