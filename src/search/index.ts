/**
 * Guided search (METHODS §5): every strategy is a plain function of (problem, config, deps:
 * policy, judge, outcome, checker) returning a {@link SearchResult} that carries its cost.
 * See docs/search.md.
 */
export { aggregateScores, argmaxBy, classifyStep } from './aggregate.js';
export { beamSearch } from './beam.js';
export {
  type BenchOptions,
  type BenchPoint,
  type BenchReport,
  type BenchSpec,
  benchChart,
  benchSearch,
  DEFAULT_BENCH_SPECS,
  parseBenchSpec,
} from './bench.js';
export { bestOfN, candidateChunks, type ScoredCandidate, sampleAndScore } from './best-of-n.js';
export {
  type ChartPoint,
  type ChartSeries,
  escapeXml,
  type LineChartOptions,
  logTicks,
  niceTicks,
  renderLineChart,
} from './chart.js';
export { chunkReset } from './chunk-reset.js';
export {
  type CostPerProblem,
  type SearchJobOptions,
  type SearchRecord,
  type SearchSummary,
  searchDataset,
  summarizeSearch,
  toSearchRecord,
} from './dataset.js';
export {
  type DomainCheck,
  type DomainSession,
  joinChunks,
  mathDomain,
  type SearchDomain,
  type StepSample,
  sampleEndsSolution,
  splitSolution,
} from './domain.js';
export { greedyPrmSearch } from './greedy-prm.js';
export { majorityVote } from './majority.js';
export { chunksAlong, pathTo } from './path.js';
export { gloreRefine } from './refine.js';
export {
  DEFAULT_SEARCH_CONFIG,
  getStrategy,
  resolveSearchConfig,
  runStrategy,
  type SearchConfig,
  STRATEGIES,
  STRATEGY_NAMES,
  type Strategy,
  type StrategyInfo,
  type StrategyName,
} from './registry.js';
export { defaultChecker, SearchRuntime, type StepRuling } from './runtime.js';
export { singleSample } from './sample.js';
export { AGGREGATIONS } from './settings.js';
export type * from './types.js';
export { TRACE_STATUS_LEGEND } from './types.js';
export { tallyVotes, type VoteGroup, winningGroup } from './vote.js';
export { weightedVote } from './weighted-vote.js';
