/**
 * Data loaders: GSM8K, MATH, MATH-500, ProcessBench, PRM800K, Math-Shepherd, HumanEval, MBPP and
 * generic JSONL, each validated per record and normalised. See docs/data.md.
 */
export { gsm8kFinalAnswer, lastBoxed, matchBraces } from './answers.js';
export { loadHumanEval, loadMbpp, MBPP_SPLITS } from './code.js';
export { loadGsm8k } from './gsm8k.js';
export { loadJsonlProblems, parseFieldMapping } from './jsonl.js';
export {
  assertDatasetName,
  type DatasetRecord,
  loadDatasetRecords,
  loadProblems,
  problemSource,
} from './load.js';
export { dataCacheDir, dataRoots } from './locate.js';
export { loadMath, loadMath500 } from './math.js';
export { loadMathShepherd, MATH_SHEPHERD_TAG, parseMathShepherd } from './mathshepherd.js';
export { loadPrm800k, prm800kLabel } from './prm800k.js';
export { loadProcessBench, PROCESSBENCH_SUBSETS } from './processbench.js';
export { PULL_SOURCES, type PullFile, type PullOptions, type PullSource, pullDataset } from './pull.js';
export {
  type InvalidLine,
  type RawItem,
  type RawRecord,
  type RecordSource,
  readRecords,
  recordStream,
  streamRecords,
} from './records.js';
export * from './types.js';
