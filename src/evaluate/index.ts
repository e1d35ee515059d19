/**
 * Evaluation: ProcessBench (first-error detection, official metric) and chunk-level agreement of a
 * judge with rollout labels. See docs/processbench.md.
 */
export {
  type ChunkEvalReport,
  type ChunkEvalSolution,
  evaluateChunks,
  readLabeledSolutions,
} from './chunks.js';
export {
  averageF1,
  type ChunkAgreement,
  chunkAgreement,
  expectedStepJudgeMetrics,
  type FirstErrorRecord,
  firstBelow,
  harmonicF1,
  type ProcessBenchScore,
  processBenchScore,
  processBenchScoreAccumulator,
  type ScoredSample,
  type SubsetMetrics,
  selectThreshold,
  subsetMetrics,
  type ThresholdChoice,
} from './metrics.js';
export {
  isSimulatedJudge,
  loadProcessBenchSamples,
  type ProcessBenchPrediction,
  type ProcessBenchReport,
  type ProcessBenchRunOptions,
  type ProcessBenchSamples,
  processBenchProblem,
  runProcessBench,
  SIMULATED_NOTICE,
  scanProcessBenchSamples,
  scoreJson,
  scorePredictions,
  spreadSample,
  stratifiedSample,
  type ThresholdMode,
} from './processbench.js';
export { PUBLISHED_PROCESSBENCH, type PublishedResult } from './published.js';
export { formatProcessBenchReport, formatScoreTable } from './table.js';
