import { z } from 'zod';
import { UsageError } from '../core/errors.js';
import type { Problem } from '../core/types.js';
import { resolveDataPath } from './locate.js';
import { loadSource, type RecordSource, recordStream } from './records.js';
import type { Loaded, LoadOptions } from './types.js';

const HumanEvalRow = z.object({
  task_id: z.string().min(1),
  prompt: z.string().min(1),
  entry_point: z.string().min(1),
  canonical_solution: z.string(),
  test: z.string().min(1),
});

/**
 * HumanEval (`{task_id, prompt, entry_point, canonical_solution, test}`), `.jsonl` or `.jsonl.gz`.
 * `question` is the prompt (signature + docstring); `answer` is the test code, which defines
 * `check(candidate)`; `meta` keeps prompt, entry_point, canonical_solution, test.
 */
export async function loadHumanEval(options: LoadOptions = {}): Promise<Loaded<Problem>> {
  return loadSource(humanEvalSource(options));
}

/** {@link loadHumanEval}'s problems, read one at a time. */
export function humanEvalSource(options: LoadOptions = {}): RecordSource<Problem> {
  const path = resolveDataPath('humaneval', options.path, 'humaneval', [
    'HumanEval.jsonl',
    'HumanEval.jsonl.gz',
  ]);
  const read: RecordSource<Problem>['read'] = (hooks) =>
    recordStream(
      path,
      HumanEvalRow,
      (row): Problem => ({
        id: row.task_id,
        question: row.prompt,
        answer: row.test,
        domain: 'code',
        source: 'humaneval',
        meta: {
          prompt: row.prompt,
          entry_point: row.entry_point,
          canonical_solution: row.canonical_solution,
          test: row.test,
        },
      }),
      { ...options, ...hooks },
    );
  return { path, read };
}

const MbppRow = z.object({
  task_id: z.number().int(),
  text: z.string().min(1),
  code: z.string(),
  test_list: z.array(z.string()).min(1),
  test_setup_code: z.string().default(''),
  challenge_test_list: z.array(z.string()).default([]),
});

/** MBPP splits by task id, as the MBPP paper and its README define them. */
export const MBPP_SPLITS: Readonly<Record<string, readonly [number, number]>> = {
  prompt: [1, 10],
  test: [11, 510],
  validation: [511, 600],
  train: [601, 974],
};

/**
 * MBPP (`{task_id, text, code, test_list, test_setup_code, challenge_test_list}`). `question` is
 * the task text; `answer` is the test code (setup code, then the asserts, one per line);
 * `meta` keeps code (the reference solution, `\r\n` line ends normalised to `\n`), test_list,
 * test_setup_code, challenge_test_list. `split` keeps one task-id range ({@link MBPP_SPLITS}).
 */
export async function loadMbpp(options: LoadOptions = {}): Promise<Loaded<Problem>> {
  return loadSource(mbppSource(options));
}

/** {@link loadMbpp}'s problems, read one at a time. */
export function mbppSource(options: LoadOptions = {}): RecordSource<Problem> {
  const path = resolveDataPath('mbpp', options.path, 'mbpp', ['mbpp.jsonl']);
  let range: readonly [number, number] | undefined;
  if (options.split !== undefined) {
    range = MBPP_SPLITS[options.split];
    if (!range)
      throw new UsageError(
        `unknown MBPP split "${options.split}" (expected ${Object.keys(MBPP_SPLITS).join(', ')})`,
      );
  }
  const inRange = (value: unknown) => {
    if (!range) return true;
    const id = (value as { task_id?: unknown } | null)?.task_id;
    return typeof id !== 'number' || (id >= range[0] && id <= range[1]);
  };
  const read: RecordSource<Problem>['read'] = (hooks) =>
    recordStream(
      path,
      MbppRow,
      (row): Problem => {
        const tests = [row.test_setup_code, ...row.test_list].filter((s) => s.trim() !== '');
        return {
          id: `mbpp/${row.task_id}`,
          question: row.text,
          answer: tests.join('\n'),
          domain: 'code',
          source: 'mbpp',
          meta: {
            task_id: row.task_id,
            code: row.code.replace(/\r\n/g, '\n'),
            test_list: row.test_list,
            test_setup_code: row.test_setup_code,
            challenge_test_list: row.challenge_test_list,
          },
        };
      },
      { ...options, ...hooks, keep: inRange },
    );
  return { path, read };
}
