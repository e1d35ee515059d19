import { z } from 'zod';
import { InputError } from '../core/errors.js';
import { type FileKind, wrongKindError } from '../core/file-kind.js';

/**
 * One zod schema per kind of JSONL record that stepwise reads and writes, beside the rule that
 * tells kinds apart (src/core/file-kind.ts). A writer's row type is `z.infer` of its kind's schema,
 * and a reader checks each line against the same schema ({@link parseRecord}: the error names file,
 * line and field, or says the line is of another known kind). Schemas of files stepwise reads
 * are loose: they require the fields the readers use and let the rest ride along; schemas of rows
 * it writes for other tools (the export rows) are strict, so a row is exactly what the engine's
 * loader reads.
 */

const message = z.object({ role: z.enum(['system', 'user', 'assistant']), content: z.string() });
const messages = z.array(message);
const segmentation = z.enum(['paragraph', 'tags']);
/** Rows from the simulated world say so (JSONL rows: a field on every row). */
const simulated = z.literal(true).optional();

// ---- Rows stepwise writes and reads back -------------------------------------------------------

/** A labeled chunk of a `stepwise label` row, as readers use it. */
export const LabelChunkSchema = z.looseObject({
  text: z.string(),
  q: z.number().nullable().optional(),
  labels: z.record(z.string(), z.union([z.boolean(), z.number(), z.null()])),
});

/** A `stepwise label` row, as the training-data builders and evaluations read it. */
export const LabelRowSchema = z.looseObject({
  id: z.string(),
  problem: z.string(),
  answer: z.string().optional(),
  chunks: z.array(LabelChunkSchema),
  firstError: z.record(z.string(), z.number()).optional(),
  segmentation: segmentation.optional(),
  /** Under tags: the text the prefixes were cut from, and where each prefix ends in it. */
  written: z.object({ text: z.string(), ends: z.array(z.number().int().nonnegative()) }).optional(),
});

/** A `stepwise sample` row, as refinement pairs read it (older files name the question `problem`). */
export const SampleRowSchema = z.looseObject({
  id: z.string(),
  question: z.string().optional(),
  problem: z.string().optional(),
  segmentation: segmentation.optional(),
  samples: z.array(
    z.looseObject({
      text: z.string(),
      correct: z.boolean(),
      segmentation: segmentation.optional(),
      written: z.string().optional(),
    }),
  ),
});

/** A `stepwise segment --segmentation llm` row: the text, its chunks as spans of it, how it was segmented. */
export const SegmentRowSchema = z.looseObject({
  id: z.string(),
  problem: z.string({ error: 'missing "problem": give the `stepwise segment` input rows a problem field' }),
  text: z.string(),
  method: z.enum(['llm', 'paragraph']),
  chunks: z.array(
    z.looseObject({
      text: z.string(),
      span: z.looseObject({ start: z.number().int(), end: z.number().int() }),
    }),
  ),
});

/** A solution with its `<chunk>` tagging given (self-segmentation input). */
export const TaggedTextRowSchema = z.looseObject({
  id: z.string(),
  problem: z.string(),
  text: z.string(),
  tagged: z.string(),
});

// ---- Rows `stepwise export` writes for the engines ----------------------------------------------

/** TRL stepwise supervision (its PRM trainer): `completions` and `labels` of equal length. */
export const TrlStepwiseRowSchema = z.strictObject({
  id: z.string(),
  prompt: z.string(),
  completions: z.array(z.string()),
  labels: z.array(z.boolean()),
  simulated,
});

/** TRL conversational prompt → verdict (judge-rl). */
export const TrlJudgmentRowSchema = z.strictObject({
  id: z.string(),
  prompt: messages,
  label: z.enum(['Positive', 'Negative']),
  simulated,
});

/** TRL conversational prompt–completion (the completion is the assistant's message). */
export const TrlSftRowSchema = z.strictObject({
  id: z.string(),
  prompt: messages,
  completion: z.tuple([z.object({ role: z.literal('assistant'), content: z.string() })]),
  simulated,
});

/** TRL standard prompt–completion: the prompt rendered by the model's template up to its own prefix. */
export const TrlContinuationRowSchema = z.strictObject({
  id: z.string(),
  prompt: z.string(),
  completion: z.string(),
  simulated,
});

/** Math-Shepherd: steps end with `ки` in `input`; `label` has `+`/`-` at the same places. */
export const MathShepherdRowSchema = z.strictObject({
  input: z.string(),
  label: z.string(),
  task: z.string(),
  simulated,
});

/**
 * OpenRLHF keyed rows: `id` and the two keys its `--input_key` / `--label_key` name, whose values are
 * the prompt (text or messages) and the label (a verdict, a `+`/`-` list, or the target text).
 */
export const OpenRlhfRowSchema = z.record(
  z.string(),
  z.union([z.string(), messages, z.array(z.enum(['+', '-'])), z.literal(true)]),
);

/** One verl RL row (judge-rl): what verl's RLHFDataset reads from the Parquet file. */
export const VerlRowSchema = z.strictObject({
  data_source: z.string(),
  prompt: messages,
  ability: z.string(),
  reward_model: z.strictObject({ style: z.enum(['rule', 'model']), ground_truth: z.string() }),
  /**
   * A fixed struct layout (Parquet needs one schema for all rows): the split, the row index, the
   * source id, the chunk index (−1 when the row is a whole solution), the signal and the problem
   * text; with a seventh field `simulated: true` in files of the simulated world's rows.
   */
  extra_info: z.strictObject({
    split: z.string(),
    index: z.number().int(),
    id: z.string(),
    chunk_index: z.number().int(),
    signal: z.string(),
    question: z.string(),
    simulated,
  }),
});

/** One verl SFT row: `messages` for its multi-turn trainer, `question` / `answer` for the single-turn one. */
export const VerlSftRowSchema = z.strictObject({
  id: z.string(),
  messages,
  question: z.string(),
  answer: z.string(),
  /** A fifth column, true on every row, in files of the simulated world's rows. */
  simulated,
});

/**
 * One line checked against its kind's schema, as `who` reads it: the value, or an InputError
 * naming file, line and field (or saying the line is another known kind than `expect.kinds`).
 */
export function parseRecord<T>(
  schema: z.ZodType<T>,
  where: { file: string; line: number },
  value: unknown,
  expect?: { kinds: readonly FileKind[]; who: string },
): T {
  const parsed = schema.safeParse(value);
  if (parsed.success) return parsed.data;
  const wrong = expect && wrongKindError(where, value, expect.kinds, expect.who);
  if (wrong) throw wrong;
  const issue = parsed.error.issues[0];
  throw new InputError({ ...where, field: issue?.path.join('.') || undefined }, issue?.message ?? 'invalid');
}
