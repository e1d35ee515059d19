import type { Problem } from '../core/types.js';

/** Every data set the loaders read. `jsonl` is any JSONL file with a field mapping. */
export type DatasetName =
  | 'gsm8k'
  | 'math'
  | 'math500'
  | 'processbench'
  | 'prm800k'
  | 'mathshepherd'
  | 'humaneval'
  | 'mbpp'
  | 'jsonl';

export const DATASET_NAMES: readonly DatasetName[] = [
  'gsm8k',
  'math',
  'math500',
  'processbench',
  'prm800k',
  'mathshepherd',
  'humaneval',
  'mbpp',
  'jsonl',
];

/** How PRM800K's neutral rating (0) is turned into a binary step label. */
export type NeutralAs = 'positive' | 'negative';

/**
 * Where a `jsonl` file keeps each part of a problem: field names, dotted for nested fields
 * (`meta.gold`). Defaults: `id` → `id` (else `<file>/<n>`), `question` → `question`, `answer` → `answer`.
 */
export interface FieldMapping {
  id?: string;
  question?: string;
  answer?: string;
}

/** Options every loader takes. */
export interface LoadOptions {
  /** File or folder to read; without it the loader looks under `$STEPWISE_DATA`, then the `data pull` cache. */
  path?: string;
  /** Stop after this many records. */
  limit?: number;
  /** Skip bad records and count them instead of stopping at the first. */
  skipInvalid?: boolean;
  /**
   * Which part of the set: GSM8K `test|train|test_socratic`; ProcessBench subset
   * `gsm8k|math|olympiadbench|omnimath`; PRM800K `phase1_train|phase1_test|phase2_train|phase2_test|examples`;
   * MBPP `test|train|validation|prompt` (task-id ranges of the MBPP paper; default all 974).
   */
  split?: string;
  /** PRM800K: the label of a neutral (0) rating. Default `positive` (the Qwen convention). */
  neutralAs?: NeutralAs;
  /** `jsonl`: which fields hold id, question and answer. */
  fields?: FieldMapping;
  /** `jsonl`: the problems' domain. Default `math`. */
  domain?: Problem['domain'];
}

/** What a typed loader returns: the normalised records, how many bad ones were skipped, the file or folder read. */
export interface Loaded<T> {
  records: T[];
  skipped: number;
  path: string;
}

/** One ProcessBench sample (Zheng et al. 2024), with the subset it came from. */
export interface ProcessBenchRecord {
  id: string;
  generator: string;
  problem: string;
  steps: string[];
  final_answer_correct: boolean;
  /** 0-based index of the earliest wrong step, −1 when every step is correct. */
  label: number;
  /** `gsm8k`, `math`, `olympiadbench` or `omnimath` (the file's name). */
  subset: string;
}

/** A PRM800K rating: −1 wrong, 0 neutral, +1 good; null where the labeller gave none (human-written steps). */
export type Prm800kRating = -1 | 0 | 1 | null;

/**
 * One PRM800K labelling, flattened to the trajectory the labeller followed: at each step the
 * chosen completion, else the labeller's own (human) completion, else the first completion (the
 * step where the labeller stopped).
 */
export interface Prm800kRecord {
  id: string;
  problem: string;
  /** `question.ground_truth_answer`. */
  answer: string | null;
  steps: string[];
  ratings: Prm800kRating[];
  /** Binary step labels: +1 → true, −1 → false, 0 → per `neutralAs`, null (human step) → true. */
  labels: boolean[];
  /** Index of the first false label, −1 when none. */
  firstError: number;
  /** `solution`, `found_error`, `give_up`, … */
  finishReason: string | null;
  neutralAs: NeutralAs;
  labeler: string | null;
  isQualityControlQuestion: boolean;
  isInitialScreeningQuestion: boolean;
}

/** One Math-Shepherd sample: the question, its steps (without the `ки` tags) and the per-step labels. */
export interface MathShepherdRecord {
  id: string;
  question: string;
  steps: string[];
  /** `+` → true, `-` → false. */
  labels: boolean[];
  /** Index of the first false label, −1 when none. */
  firstError: number;
  /** `GSM8K` or `MATH`. */
  task: string;
}
