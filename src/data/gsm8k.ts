import { basename } from 'node:path';
import { z } from 'zod';
import type { Problem } from '../core/types.js';
import { gsm8kFinalAnswer } from './answers.js';
import { resolveDataPath } from './locate.js';
import { loadSource, RecordProblem, type RecordSource, recordStream } from './records.js';
import type { Loaded, LoadOptions } from './types.js';

const Gsm8kRow = z.object({ question: z.string().min(1), answer: z.string() });

/** Name of a split from its file name: `…/test.jsonl` → `test`. */
export function splitFromFile(file: string): string {
  return basename(file)
    .replace(/\.gz$/, '')
    .replace(/\.(jsonl|json)$/, '');
}

/**
 * GSM8K (`{question, answer}`): `answer` becomes the number after `####`, commas removed; the
 * worked solution is kept in `meta.solution`. Ids are `gsm8k/<split>/<n>` (n = 0-based row).
 */
export async function loadGsm8k(options: LoadOptions = {}): Promise<Loaded<Problem>> {
  return loadSource(gsm8kSource(options));
}

/** {@link loadGsm8k}'s problems, read one at a time. */
export function gsm8kSource(options: LoadOptions = {}): RecordSource<Problem> {
  const split = options.split ?? 'test';
  const path = resolveDataPath('gsm8k', options.path, 'gsm8k', [`${split}.jsonl`]);
  const name = options.path ? (options.split ?? splitFromFile(path)) : split;
  const read: RecordSource<Problem>['read'] = (hooks) =>
    recordStream(
      path,
      Gsm8kRow,
      (row, raw): Problem => {
        const answer = gsm8kFinalAnswer(row.answer);
        if (answer === null) throw new RecordProblem('answer', 'no "#### <answer>" line in the solution');
        return {
          id: `gsm8k/${name}/${raw.ordinal}`,
          question: row.question,
          answer,
          domain: 'math',
          source: 'gsm8k',
          meta: { solution: row.answer },
        };
      },
      { ...options, ...hooks },
    );
  return { path, read };
}
