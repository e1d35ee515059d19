import { z } from 'zod';
import { splitFromFile } from './gsm8k.js';
import { resolveDataPath } from './locate.js';
import { loadSource, RecordProblem, type RecordSource, recordStream } from './records.js';
import type { Loaded, LoadOptions, MathShepherdRecord } from './types.js';

/** Math-Shepherd's step tag: it ends every step in `input`; `label` has `+` or `-` in its place. */
export const MATH_SHEPHERD_TAG = 'ки';

const MathShepherdRow = z.object({
  input: z.string().min(1),
  label: z.string().min(1),
  task: z.string(),
});

/**
 * Split one Math-Shepherd row. `input` is the question followed by `Step 1: … ки`, `Step 2: … ки`, …;
 * `label` is the same text with each `ки` replaced by `+` or `-`. The question is the text before
 * the first `Step 1:`; steps are trimmed and keep their `Step k:` prefix.
 */
export function parseMathShepherd(
  input: string,
  label: string,
): { question: string; steps: string[]; labels: boolean[] } {
  const first = /Step\s*1\s*:/.exec(input);
  if (!first) throw new RecordProblem('input', 'no "Step 1:" marker after the question');
  const parts = input.split(MATH_SHEPHERD_TAG);
  if (parts.length < 2) throw new RecordProblem('input', `no "${MATH_SHEPHERD_TAG}" step tags`);
  const steps: string[] = [];
  const labels: boolean[] = [];
  let cursor = 0; // position in `label`
  let offset = 0; // position in `input`
  for (let i = 0; i < parts.length - 1; i++) {
    const part = parts[i];
    if (!label.startsWith(part, cursor))
      throw new RecordProblem('label', `does not match input before step tag ${i + 1}`);
    cursor += part.length;
    const mark = label[cursor];
    if (mark !== '+' && mark !== '-')
      throw new RecordProblem('label', `expected "+" or "-" at step tag ${i + 1}, found "${mark ?? ''}"`);
    cursor++;
    const stepStart = i === 0 ? first.index : offset;
    steps.push(input.slice(stepStart, offset + part.length).trim());
    labels.push(mark === '+');
    offset += part.length + MATH_SHEPHERD_TAG.length;
  }
  if (label.slice(cursor) !== parts[parts.length - 1])
    throw new RecordProblem('label', 'does not match input after the last step tag');
  return { question: input.slice(0, first.index).trim(), steps, labels };
}

/**
 * Math-Shepherd (`{input, label, task}`, Wang et al. 2024): question, steps without tags, and
 * `+`/`-` step labels. Ids are `mathshepherd/<split>/<n>`. Without a path:
 * `<data>/mathshepherd/math-shepherd.jsonl` (the file's name on its Hugging Face home).
 */
export async function loadMathShepherd(options: LoadOptions = {}): Promise<Loaded<MathShepherdRecord>> {
  return loadSource(mathShepherdSource(options));
}

/** {@link loadMathShepherd}'s records, read one at a time (a line at a time). */
export function mathShepherdSource(options: LoadOptions = {}): RecordSource<MathShepherdRecord> {
  const split = options.split ?? 'math-shepherd';
  const path = resolveDataPath('mathshepherd', options.path, 'mathshepherd', [`${split}.jsonl`]);
  const name = options.path ? (options.split ?? splitFromFile(path)) : split;
  const read: RecordSource<MathShepherdRecord>['read'] = (hooks) =>
    recordStream(
      path,
      MathShepherdRow,
      (row, raw): MathShepherdRecord => {
        const parsed = parseMathShepherd(row.input, row.label);
        return {
          id: `mathshepherd/${name}/${raw.ordinal}`,
          ...parsed,
          firstError: parsed.labels.indexOf(false),
          task: row.task,
        };
      },
      { ...options, ...hooks },
    );
  return { path, read };
}
