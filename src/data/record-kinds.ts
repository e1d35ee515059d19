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

/**
 * A `stepwise sample` row, as refinement pairs and `select` read it (older files name the question
 * `problem`; a sample's chunks may be given as strings or `{text}`).
 */
export const SampleRowSchema = z.looseObject({
  id: z.string(),
  question: z.string().optional(),
  problem: z.string().optional(),
  segmentation: segmentation.optional(),
  simulated: z.boolean().optional(),
  samples: z.array(
    z.looseObject({
      text: z.string(),
      correct: z.boolean(),
      chunks: z.array(z.union([z.string(), z.looseObject({ text: z.string() })])).optional(),
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

const textOrNumber = z.union([z.string(), z.number()]);
/** The message when a label input row's problem text is neither given nor found by id (src/label/input.ts). */
export const missingProblem =
  'missing problem text (field "problem" or "question"); for `stepwise sample` output, name the data set ' +
  'the samples came from (--dataset, --path, --split) so questions are looked up by id';
/** The message when a label input row's gold answer is neither given nor found by id (src/label/input.ts). */
export const missingGold = 'missing gold answer (field "answer"): rollouts are checked against it';
const inputChunk = z.union([z.string(), z.looseObject({ text: textOrNumber })], {
  error: 'expected strings or {text} objects',
});

/**
 * A sample of a "solutions to label" row: broader than {@link SampleRowSchema} (`correct` may be
 * absent, `text` may be left out when `chunks` are given). Under tags `text` is required (the
 * reader checks that: it depends on the row's segmentation).
 */
export const LabelInputSampleSchema = z
  .looseObject(
    {
      text: textOrNumber.optional(),
      correct: z.boolean({ error: 'expected true or false' }).optional(),
      chunks: z.array(inputChunk, { error: 'expected strings or {text} objects' }).optional(),
    },
    { error: 'expected an object with "text"' },
  )
  .refine((s) => s.text !== undefined || (s.chunks?.length ?? 0) > 0, {
    error: 'missing sample text',
    path: ['text'],
  });

/**
 * A row of solutions to label (what `stepwise label` reads, src/label/input.ts): `{id,
 * problem|question, answer, steps[]}`, or `stepwise sample` output `{id, problem?, answer|gold,
 * samples[]}` whose question and gold may be looked up by id in the data set (the reader checks
 * that they are found, and that the segmentation agrees across the file).
 */
export const LabelInputRowSchema = z.looseObject({
  segmentation: z.enum(['paragraph', 'tags'], { error: 'expected "paragraph" or "tags"' }).optional(),
  id: z.union([z.string().min(1, { error: 'missing id (a string)' }), z.number()], {
    error: 'missing id (a string)',
  }),
  problem: z
    .union([textOrNumber, z.null(), z.looseObject({ question: textOrNumber.optional() })], {
      error: missingProblem,
    })
    .optional(),
  question: z.union([z.string(), z.number()], { error: missingProblem }).optional(),
  answer: z.union([textOrNumber, z.null()], { error: missingGold }).optional(),
  gold: z.union([textOrNumber, z.null()], { error: missingGold }).optional(),
  samples: z.array(LabelInputSampleSchema, { error: 'expected a list of samples' }).optional(),
  steps: z
    .array(
      z.union([textOrNumber, z.looseObject({ text: textOrNumber })], { error: 'expected a list of strings' }),
      {
        error: 'expected a list of strings',
      },
    )
    .optional(),
});

/** A solution with its `<chunk>` tagging given (self-segmentation input). */
export const TaggedTextRowSchema = z.looseObject({
  id: z.string(),
  problem: z.string(),
  text: z.string(),
  tagged: z.string(),
});

// ---- Rows stepwise writes: each writer's row type is `z.infer` of its schema here (strict) ----------

const count = z.number().int().nonnegative();
/** A chunk of a solution: its text and where it sits in the solution text (src/core/types.ts Chunk). */
const chunk = z.strictObject({
  index: count,
  text: z.string(),
  span: z.strictObject({ start: count, end: count }),
});
/** Calls and tokens of one role, and of both (src/core/types.ts RoleCost, Cost). */
const roleCost = z.strictObject({
  calls: count,
  samples: count,
  promptTokens: count,
  completionTokens: count,
});
const cost = z.strictObject({ policy: roleCost, judge: roleCost });
/**
 * The job record on every row of a job (src/jobs/settings.ts RowJob): the command, the settings
 * hash, the settings, and the part of a `--shard K/N` run.
 */
const rowJob = z.strictObject({
  command: z.string(),
  hash: z.string(),
  settings: z.record(z.string(), z.unknown()),
  shard: z
    .strictObject({ index: z.number().int().positive(), count: z.number().int().positive() })
    .optional(),
});
/** Resume by content (src/jobs/made-from.ts): the digest of what a row was made from. */
const madeFrom = z.string().optional();

/** One sampled solution of a `stepwise sample` row. */
export const SampledSolutionSchema = z.strictObject({
  /** What the policy wrote (under tags, with its `<chunk>` tags; see `written` for malformed tags). */
  text: z.string(),
  /** The solution split into steps (paragraphs by default, the policy's own chunks under tags); spans index `text`. */
  chunks: z.array(chunk),
  /**
   * Under `--segmentation tags`: `tags` when the policy's tags were well formed, `paragraph` when
   * they were not — then `tagProblem` says why, `written` holds the reply as written and `text`
   * is that reply with the tags removed, split on blank lines.
   */
  segmentation: segmentation.optional(),
  tagProblem: z.string().optional(),
  written: z.string().optional(),
  /** Extracted final answer, null when none. */
  answer: z.string().nullable(),
  correct: z.boolean(),
  /** Completion tokens of this sample. */
  tokens: count,
  finishReason: z.enum(['stop', 'length', 'error', 'other']),
});

/** One line `stepwise sample` writes: a problem and its K samples ({@link SampleRowSchema} reads it back). */
export const SampleOutputRowSchema = z.strictObject({
  id: z.string(),
  /** The question as the policy saw it, so the file stands alone (labeling, selection, refinement pairs). */
  question: z.string(),
  /** Gold answer the samples were checked against. */
  gold: z.string(),
  samples: z.array(SampledSolutionSchema),
  /** Prompt tokens of the request(s) that produced the samples (0 when served from the cache). */
  promptTokens: count,
  /** True when every sample came from the cache. */
  cached: z.boolean(),
  /** The settings of the job that wrote the row. */
  job: rowJob.optional(),
  /** Present and true when the policy is the simulated world (however it was reached). */
  simulated,
  /** How the policy was asked to segment its solutions (`--segmentation`; absent in older files: paragraph). */
  segmentation: segmentation.optional(),
  madeFrom,
});

const pick = z.strictObject({ index: count, text: z.string() });

/** One line `stepwise select` writes: the judge's pick and the outcome-only pick of a problem. */
export const SelectOutputRowSchema = z.strictObject({
  id: z.string(),
  question: z.string(),
  /** The correct response with the highest mean chunk score (StepWiser's rejection-sampling pick). */
  chosen: z.strictObject({ index: count, text: z.string(), meanScore: z.number() }).nullable(),
  /** The outcome-only pick for comparison: a correct response chosen uniformly at random (seeded). */
  outcomeOnly: pick.nullable(),
  /**
   * Mean chunk score of every correct response, over the chunks the judge ruled on (a chunk with
   * no parsable verdict is an abstention, left out; `abstained` counts them).
   */
  candidates: z.array(z.strictObject({ index: count, meanScore: z.number(), abstained: count.optional() })),
  /** Judge replies with no parsable verdict, and the judge replies read. */
  formatFailures: count,
  judgeReplies: count,
  cost,
  /** Present and true when the judge or the policy that wrote the responses is simulated. */
  simulated,
  madeFrom,
  /** The settings of the job that wrote the row. */
  job: rowJob.optional(),
});

/**
 * The rollout label signals, by name (the `--signals` values; src/label/signals.ts computes and
 * documents each): the keys of a label row's `labels` and `firstError`.
 */
export const LABEL_SIGNAL_NAMES = [
  'abs-q',
  'rel-ratio',
  'rel-effective',
  'ms-hard',
  'ms-soft',
  'sorm',
] as const;
const labelSignal = z.enum(LABEL_SIGNAL_NAMES);

/** A rollout kept in the output (`--keep-rollouts`): the continuation only, never the prefix. */
export const KeptRolloutSchema = z.strictObject({
  /** The text the policy wrote after the prefix. */
  text: z.string(),
  /** Whether prefix + text reaches the gold answer. */
  correct: z.boolean(),
});

/** One labeled chunk of a row `stepwise label` writes. */
export const LabeledChunkOutputSchema = z.strictObject({
  text: z.string(),
  /** Q̂ after this chunk; null when the chunk's prefix was not estimated (binary search). */
  q: z.number().nullable(),
  /**
   * Rollouts drawn from the prefix that ends after this chunk: their number (0 when not
   * estimated), or with `keepRollouts` the rollouts themselves ([] when not estimated).
   */
  rollouts: z.union([count, z.array(KeptRolloutSchema)]),
  /** Label per signal: true = positive; a number for `ms-soft`; null when undetermined (binary search, after the first error). */
  labels: z.partialRecord(labelSignal, z.union([z.boolean(), z.number(), z.null()])),
});

/** One line `stepwise label` writes ({@link LabelRowSchema} reads it back). */
export const LabelOutputRowSchema = z.strictObject({
  id: z.string(),
  problem: z.string(),
  answer: z.string(),
  /** Whether the solution's own final answer is correct (from the input, or checked). */
  finalAnswerCorrect: z.boolean(),
  search: z.enum(['linear', 'binary']),
  /** The job's segmentation: how the policy was asked to write, and how prefixes were built (absent in older files: paragraph). */
  segmentation: segmentation.optional(),
  /** Q̂ of the empty prefix (the problem's base success rate); null in binary search. */
  q0: z.number().nullable(),
  /** With `keepRollouts`: the rollouts from the empty prefix (the bare problem), in linear search. */
  emptyPrefixRollouts: z.array(KeptRolloutSchema).optional(),
  chunks: z.array(LabeledChunkOutputSchema),
  /** First error per signal: 0-based chunk index, −1 when none. */
  firstError: z.partialRecord(labelSignal, z.number().int().min(-1)),
  /**
   * Under `tags`: the text every prefix was cut from (the policy's own text, tags included, or the
   * form the prefixes were rebuilt in) and `ends[i]`, where the prefix of chunks 0..i ends in it.
   * Training data built from the record (refine-local) quotes the policy's text through it.
   */
  written: z.strictObject({ text: z.string(), ends: z.array(count) }).optional(),
  /** Rollouts the labels rest on, and their completion tokens (cached or not). */
  cost: z.strictObject({ rollouts: count, tokens: count }),
  /** Present and true when the policy that rolled out is the simulated world. */
  simulated,
  madeFrom,
  job: rowJob.optional(),
});

/** The kinds of syntax-tree mutation (python/stepwise_mutate.py), as label-code rows name them. */
export const MUTATION_KIND_NAMES = [
  'arithmetic',
  'comparison',
  'constant',
  'off-by-one',
  'boolean',
  'call',
  'drop',
] as const;

/** How a program's run against its tests ended (src/verify/code/sandbox.ts says what each means). */
export const SANDBOX_STATUS_NAMES = [
  'passed',
  'failed',
  'error',
  'timeout',
  'memory',
  'fork-limit',
  'network-blocked',
  'output-limit',
  'not-run',
] as const;

/**
 * One line `stepwise label-code` writes: a labeled solution shaped for two readers at once, TRL
 * stepwise supervision (its PRMTrainer: `prompt`, `completions`, `labels` of equal length) and
 * `stepwise export --task prm --signal mutation` (`id`, `problem`, `chunks[{text, labels}]`, `firstError`).
 */
export const CodeLabelRowSchema = z.strictObject({
  id: z.string(),
  problemId: z.string(),
  /** TRL: the problem as a policy sees it. */
  prompt: z.string(),
  /** TRL: the steps (logical blocks or lines of code), up to and including the first mutated one. */
  completions: z.array(z.string()),
  /** TRL: true = good step. Same length as `completions`. */
  labels: z.array(z.boolean()),
  /** Label-file view of the same row (for `stepwise export`). */
  problem: z.string(),
  chunks: z.array(z.strictObject({ text: z.string(), labels: z.strictObject({ mutation: z.boolean() }) })),
  firstError: z.strictObject({ mutation: z.number().int().min(-1) }),
  /** `mutant` rows end in their one negative step; `reference` rows are all positive. */
  origin: z.enum(['mutant', 'reference']),
  mutation: z
    .strictObject({ kind: z.enum(MUTATION_KIND_NAMES), description: z.string(), line: z.number().int() })
    .optional(),
  /** How the mutant failed its tests (`failed`, `error`, `timeout`, …); `passed` for the reference. */
  status: z.enum(SANDBOX_STATUS_NAMES),
  /** Code that belongs to the prompt, not to the steps (HumanEval's signature and docstring). */
  given: z.string().optional(),
});

const verdict = z.enum(['positive', 'negative', 'neutral']);

/**
 * One attempt in a search tree: a sampled step (step-wise strategies) or a whole solution
 * (best-of-N, majority, refinement). `parent` points at the attempt it continues; null = the bare problem.
 */
export const TraceNodeSchema = z.strictObject({
  id: count,
  parent: count.nullable(),
  /** Chunk index the attempt would occupy (0 for whole solutions). */
  depth: count,
  text: z.string(),
  /**
   * What became of the attempt: `accepted` (kept in the final solution / path), `rejected`
   * (judged and discarded, then regenerated or abandoned), `fallback` (rejected, but kept because
   * every attempt was rejected), `pruned` (a candidate not selected, or a beam that fell out of
   * the top N/m), `backtracked` (accepted, later abandoned by a backtrack), `finished` (a finished
   * candidate that was not the chosen one).
   */
  status: z.enum(['accepted', 'rejected', 'fallback', 'pruned', 'backtracked', 'finished']),
  verdict: verdict.optional(),
  score: z.number().optional(),
  /** The judge's analysis of this attempt, where the judge writes one. */
  rationale: z.string().optional(),
  /** The judge gave no parsable verdict on it (an abstention: score 0, never approval; docs/search.md). */
  abstained: z.literal(true).optional(),
  /** True when this attempt ended the solution (final answer or end of text). */
  final: z.boolean().optional(),
  /** What the attempt is: `candidate 3`, `draft`, `global`, `local`, `beam 2`, … */
  label: z.string().optional(),
  /** The extracted final answer of a whole-solution attempt. */
  answer: z.string().nullable().optional(),
});

/** A backtrack of greedy search: from the node whose children were all negative, up to its parent (null = root). */
export const BacktrackSchema = z.strictObject({ from: count, to: count.nullable() });

/** One chunk of a search's final solution. */
export const SearchChunkSchema = z.strictObject({
  index: count,
  text: z.string(),
  verdict: verdict.optional(),
  score: z.number().optional(),
  /** The judge's analysis of this chunk, where the judge writes one. */
  rationale: z.string().optional(),
  /** Attempts made for this chunk position (1 when it was accepted first time). */
  attempts: count,
  /** The trace node this chunk came from. */
  node: count.optional(),
});

/** One line `stepwise search` writes over a data set. */
export const SearchOutputRowSchema = z.strictObject({
  id: z.string(),
  /** The question as the policy saw it, so the file stands alone (absent in older files). */
  question: z.string().optional(),
  strategy: z.string(),
  /** How the policy segmented its solution (`--segmentation`; absent in older files: paragraph). */
  segmentation: segmentation.optional(),
  /** Gold answer the final answer was checked against. */
  gold: z.string(),
  answer: z.string().nullable(),
  correct: z.boolean().optional(),
  finalText: z.string(),
  chunks: z.array(SearchChunkSchema),
  cost,
  /** Strategy-specific numbers: attempts, fallbacks, backtracks, refinement choice, vote counts, … */
  stats: z.record(z.string(), z.union([z.number(), z.string(), z.boolean()])),
  /** The full trace and backtracks (omitted with `trace: false` to keep files small). */
  trace: z.array(TraceNodeSchema).optional(),
  backtracks: z.array(BacktrackSchema).optional(),
  /** Present and true when the problem comes from the simulated world. */
  simulated,
  /** Present and true when the judge steering the search read the gold answer (`--allow-gold-judge`). */
  judgeUsedGold: z.literal(true).optional(),
  madeFrom,
  job: rowJob.optional(),
});

/**
 * One line `stepwise segment --segmentation llm` writes ({@link SegmentRowSchema} reads it back):
 * the chunks of the input text, which splitter made them, and the replies asked for.
 */
export const SegmentOutputRowSchema = z.strictObject({
  id: z.string(),
  /** Spans index the input's `text`: `chunk.text === text.slice(span.start, span.end)`. */
  chunks: z.array(z.strictObject({ text: z.string(), span: z.strictObject({ start: count, end: count }) })),
  method: z.enum(['llm', 'paragraph']),
  /** Replies asked for (1 when the first was accepted). */
  attempts: count,
  /** Why each rejected reply was rejected. */
  rejected: z.array(z.string()),
  /** The input text (and problem), so the file stands alone (e.g. for `export --task selfseg`). */
  text: z.string(),
  problem: z.string().optional(),
  madeFrom,
  /** The settings of the job that wrote the row: a resumed output must have the same. */
  job: rowJob.optional(),
});

/**
 * One line of `eval chunks`' per-chunk file: the rollout label and Q̂ beside the judge's verdict
 * and score, so a disagreement can be read chunk by chunk.
 */
export const ChunkJudgmentRowSchema = z.strictObject({
  /** The labelled solution's id. */
  solution: z.string(),
  chunk: count,
  text: z.string(),
  /** The rollout label under the report's signal; null = undetermined (not compared). */
  label: z.boolean().nullable(),
  q: z.number().nullable(),
  /** Null when the judge did not rule on this chunk (an outcome model judges the end only). */
  verdict: verdict.nullable(),
  score: z.number().nullable(),
  /** Verdict and label agree; null when either is missing or the verdict is neutral (an abstention). */
  agrees: z.boolean().nullable(),
  rationale: z.string().optional(),
  simulated,
});

/** One line of `eval processbench`'s predictions file: `{id, prediction}` plus what the judge said. */
export const PredictionOutputRowSchema = z.strictObject({
  id: z.string(),
  subset: z.string(),
  label: z.number().int().min(-1),
  /** Predicted first error (−1 = none); null when the judge gave no usable answer (counted as a miss). */
  prediction: z.number().int().min(-1).nullable(),
  steps: count,
  /** Chunk scores the prediction was derived from (all chunks for threshold modes; judged chunks otherwise). */
  scores: z.array(z.number()),
  /** The judge's own first error at its own threshold. */
  judgeFirstError: z.number().int().min(-1),
  /** Judge replies with no parsable verdict, and the replies read (parsed or not). */
  formatFailures: count,
  replies: count.optional(),
  /** The first chunk the judge gave no parsable verdict on (an abstention there), when any. */
  abstainedAt: count.optional(),
  /**
   * The judge gave no usable first-error answer at its own verdicts (no parsable answer, or no
   * parsable verdict before its first negative chunk). The prediction is then null, a miss.
   */
  abstained: z.boolean().optional(),
  /** Judge-role cost of this sample. */
  cost: roleCost,
  /** The judge spec that produced it (a resumed run must use the same judge and settings). */
  judge: z.string(),
  /** Votes and seed of the run that produced it (null = the judge's default). */
  settings: z.strictObject({ votes: count.nullable(), seed: z.number().int().nullable() }),
  /** Present and true when the judge is simulated (every line says so, wherever it is read). */
  simulated,
  madeFrom,
  job: rowJob.optional(),
});

const predictionError = (iss: { input?: unknown }) =>
  `expected an integer ≥ -1 or null, got ${JSON.stringify(iss.input)}`;

/**
 * A predictions row as `eval processbench --predictions` reads it: `{id, prediction}`, the rest
 * (what `eval processbench` writes beside them, {@link PredictionOutputRowSchema}) riding along.
 */
export const PredictionRowSchema = z.looseObject({
  id: z.string({ error: 'missing or not a string' }).min(1, { error: 'missing or not a string' }),
  prediction: z
    .number({ error: predictionError })
    .int({ error: predictionError })
    .min(-1, { error: predictionError })
    .nullable(),
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
