import { UsageError } from '../core/errors.js';
import type { Problem } from '../core/types.js';
import { loadHumanEval, loadMbpp } from './code.js';
import { loadGsm8k } from './gsm8k.js';
import { loadJsonlProblems } from './jsonl.js';
import { loadMath, loadMath500 } from './math.js';
import { loadMathShepherd } from './mathshepherd.js';
import { loadPrm800k } from './prm800k.js';
import { loadProcessBench } from './processbench.js';
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
  switch (name) {
    case 'processbench': {
      const { records, skipped, path } = await loadProcessBench(options);
      const problems = records.map(
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
      return { problems, skipped, path };
    }
    case 'prm800k': {
      const { records, skipped, path } = await loadPrm800k(options);
      const problems = records.map(
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
      return { problems, skipped, path };
    }
    case 'mathshepherd': {
      const { records, skipped, path } = await loadMathShepherd(options);
      const problems = records.map(
        (r): Problem => ({
          id: r.id,
          question: r.question,
          answer: '',
          domain: 'math',
          source: 'mathshepherd',
          meta: { task: r.task, steps: r.steps, labels: r.labels, firstError: r.firstError },
        }),
      );
      return { problems, skipped, path };
    }
    default: {
      const { records, skipped, path } = (await loadDatasetRecords(name, options)) as Loaded<Problem>;
      return { problems: records, skipped, path };
    }
  }
}
