/** Bulk sampling: K solutions per problem, segmented and checked, with accuracy and pass@k. */
export { reportedKs } from './passk.js';
export {
  runSampleJob,
  type SampledSolution,
  type SampleJobOptions,
  type SampleRecord,
  type SampleSummary,
  sampleProblem,
  summarizeSamples,
} from './sample.js';
