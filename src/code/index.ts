export { type CodeSegmentBy, chunkLines, joinCodeSteps, segmentCode, splitCodeBlocks } from './blocks.js';
export {
  CODE_SEARCH_PRESET,
  CODE_TEMPLATES,
  type CodeDomainOptions,
  codeDomain,
  codeDomainFor,
  codeTemplates,
  createCodeDomain,
  cutAtFence,
  firstNewBlock,
  givenCode,
  newBlocks,
} from './domain.js';
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
