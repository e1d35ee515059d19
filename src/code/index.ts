export { type CodeSegmentBy, chunkLines, joinCodeSteps, segmentCode, splitCodeBlocks } from './blocks.js';
export {
  type MutationLabelJobOptions,
  type MutationLabelSummary,
  partsFileFor,
  runMutationLabelJob,
  summarize as summarizeMutationLabels,
} from './job.js';
export {
  type CodeLabelRow,
  codeSteps,
  firstMutatedStep,
  labelByMutation,
  MUTATION_SIGNAL,
  type MutationLabelOptions,
  type MutationLabelResult,
  mutantRow,
} from './label.js';
export { generateMutants, MUTATION_KINDS, type Mutant, type MutantsOf, type MutationKind } from './mutate.js';
export { createCodePolicy } from './policy.js';
export {
  aggregateStepScores,
  type CodeAggregation,
  type CodeSearchOptions,
  type CodeSearchResult,
  type CodeSearchStep,
  codeBestOfN,
  codeGreedySearch,
  firstNewBlock,
  givenCode,
  verifyCodeSearchResult,
} from './search.js';
