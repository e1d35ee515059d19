import { z } from 'zod';
import type { Problem } from '../core/types.js';
import { lastBoxed } from './answers.js';
import { splitFromFile } from './gsm8k.js';
import { resolveDataPath } from './locate.js';
import { loadSource, RecordProblem, type RecordSource, recordStream } from './records.js';
import type { Loaded, LoadOptions } from './types.js';

const MathRow = z.object({
  problem: z.string().min(1),
  solution: z.string(),
  answer: z.string().optional(),
  level: z.union([z.string(), z.number()]).optional(),
  type: z.string().optional(),
  subject: z.string().optional(),
  unique_id: z.string().optional(),
});

/** `Level 3` or `3` → 3; anything else → null. */
function levelNumber(level: string | number | undefined): number | null {
  if (typeof level === 'number') return level;
  const m = /(\d+)/.exec(level ?? '');
  return m ? Number(m[1]) : null;
}

/**
 * MATH and MATH-500 (`{problem, solution, answer?, level, type|subject, unique_id?}`). The gold
 * answer is the `answer` field when present (MATH-500), else the last `\boxed{}` of the solution.
 * Ids: `unique_id` when present (`test/precalculus/807.json`), else `<source>/<split>/<n>`.
 * `meta` holds solution, level (a number), subject.
 */
export async function loadMath(
  options: LoadOptions = {},
  source: 'math' | 'math500' = 'math',
): Promise<Loaded<Problem>> {
  return loadSource(mathSource(options, source));
}

/** {@link loadMath}'s problems, read one at a time. */
export function mathSource(
  options: LoadOptions = {},
  source: 'math' | 'math500' = 'math',
): RecordSource<Problem> {
  const split = options.split ?? 'test';
  const path = resolveDataPath(source, options.path, source, [`${split}.jsonl`]);
  const name = options.path ? (options.split ?? splitFromFile(path)) : split;
  const read: RecordSource<Problem>['read'] = (hooks) =>
    recordStream(
      path,
      MathRow,
      (row, raw): Problem => {
        const answer = row.answer?.trim() || lastBoxed(row.solution);
        if (answer === null || answer === '')
          throw new RecordProblem('solution', 'no answer field and no \\boxed{} answer in the solution');
        const meta: Record<string, unknown> = {
          solution: row.solution,
          level: levelNumber(row.level),
          subject: row.subject ?? row.type ?? null,
        };
        if (row.unique_id !== undefined) meta.unique_id = row.unique_id;
        return {
          id: row.unique_id ?? `${source}/${name}/${raw.ordinal}`,
          question: row.problem,
          answer,
          domain: 'math',
          source,
          meta,
        };
      },
      { ...options, ...hooks },
    );
  return { path, read };
}

/** MATH-500 (the PRM800K test split of MATH): {@link loadMath} with source `math500`. */
export function loadMath500(options: LoadOptions = {}): Promise<Loaded<Problem>> {
  return loadMath(options, 'math500');
}
