import { UsageError } from '../core/errors.js';
import type { Problem } from '../core/types.js';
import { humanEvalSource, loadHumanEval, loadMbpp, mbppSource } from './code.js';
import { gsm8kSource, loadGsm8k } from './gsm8k.js';
import { jsonlProblemSource, loadJsonlProblems } from './jsonl.js';
import { loadMath, loadMath500, mathSource } from './math.js';
import { loadMathShepherd, mathShepherdSource } from './mathshepherd.js';
import { loadPrm800k, prm800kSource } from './prm800k.js';
import { loadProcessBench, processBenchSource } from './processbench.js';
import { loadSource, type RecordSource } from './records.js';
import {
  DATASET_NAMES,
  type DatasetName,
  type Loaded,
  type LoadOptions,
  type MathShepherdRecord,
  type Prm800kRecord,
  type ProcessBenchRecord,
} from './types.js';

/** A set's records in its own normalised shape: `Problem` for problem sets, typed records for step-labelled sets. */
export type DatasetRecord = Problem | ProcessBenchRecord | Prm800kRecord | MathShepherdRecord;

/** Throws a {@link UsageError} unless `name` is a known data set. */
export function assertDatasetName(name: string): DatasetName {
  if (!(DATASET_NAMES as readonly string[]).includes(name))
    throw new UsageError(`unknown data set "${name}" (expected one of ${DATASET_NAMES.join(', ')})`);
  return name as DatasetName;
}

/**
 * A data set's records in their natural normalised shape: `Problem` for gsm8k, math, math500,
 * humaneval, mbpp and jsonl; {@link ProcessBenchRecord}, {@link Prm800kRecord},
 * {@link MathShepherdRecord} for the step-labelled sets. This is what `stepwise data show` prints.
 */
export function loadDatasetRecords(
  name: DatasetName,
  options: LoadOptions = {},
): Promise<Loaded<DatasetRecord>> {
  switch (name) {
    case 'gsm8k':
      return loadGsm8k(options);
    case 'math':
      return loadMath(options);
    case 'math500':
      return loadMath500(options);
    case 'humaneval':
      return loadHumanEval(options);
    case 'mbpp':
      return loadMbpp(options);
    case 'jsonl':
      return loadJsonlProblems(options);
    case 'processbench':
      return loadProcessBench(options);
    case 'prm800k':
      return loadPrm800k(options);
    case 'mathshepherd':
      return loadMathShepherd(options);
  }
}

/**
 * Any data set as core `Problem`s: the uniform entry point for methods that need problems.
 * Step-labelled sets become problems too: ProcessBench (no gold answer: `answer` is `''`;
 * `meta` holds subset, generator, steps, label, final_answer_correct), PRM800K (`answer` =
 * ground-truth answer; `meta` holds steps, ratings, labels, firstError, finishReason),
 * Math-Shepherd (no gold answer: `answer` is `''`; `meta` holds task, steps, labels, firstError).
 * Code sets have domain `code`, `answer` = the test code.
 */
export async function loadProblems(
  name: DatasetName,
  options: LoadOptions = {},
): Promise<{ problems: Problem[]; skipped: number; path: string }> {
  const { records, skipped, path } = await loadSource(problemSource(name, options));
  return { problems: records, skipped, path };
}

/**
 * {@link loadProblems}, one problem at a time: each `read()` reads the data set anew, JSONL a
 * line at a time, so a job over a file of any size holds only the problems it is working on.
 */
export function problemSource(name: DatasetName, options: LoadOptions = {}): RecordSource<Problem> {
  switch (name) {
    case 'processbench':
      return mapSource(
        processBenchSource(options),
        (r): Problem => ({
          id: r.id,
          question: r.problem,
          answer: '',
          domain: 'math',
          source: 'processbench',
          meta: {
            subset: r.subset,
            generator: r.generator,
            steps: r.steps,
            label: r.label,
            final_answer_correct: r.final_answer_correct,
          },
        }),
      );
    case 'prm800k':
      return mapSource(
        prm800kSource(options),
        (r): Problem => ({
          id: r.id,
          question: r.problem,
          answer: r.answer ?? '',
          domain: 'math',
          source: 'prm800k',
          meta: {
            steps: r.steps,
            ratings: r.ratings,
            labels: r.labels,
            firstError: r.firstError,
            finishReason: r.finishReason,
            neutralAs: r.neutralAs,
          },
        }),
      );
    case 'mathshepherd':
      return mapSource(
        mathShepherdSource(options),
        (r): Problem => ({
          id: r.id,
          question: r.question,
          answer: '',
          domain: 'math',
          source: 'mathshepherd',
          meta: { task: r.task, steps: r.steps, labels: r.labels, firstError: r.firstError },
        }),
      );
    case 'gsm8k':
      return gsm8kSource(options);
    case 'math':
      return mathSource(options);
    case 'math500':
      return mathSource(options, 'math500');
    case 'humaneval':
      return humanEvalSource(options);
    case 'mbpp':
      return mbppSource(options);
    case 'jsonl':
      return jsonlProblemSource(options);
  }
}

function mapSource<T, U>(source: RecordSource<T>, f: (record: T) => U): RecordSource<U> {
  return {
    path: source.path,
    async *read(hooks) {
      for await (const r of source.read(hooks)) yield f(r);
    },
  };
}
