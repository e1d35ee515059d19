import { z } from 'zod';
import { UsageError } from '../core/errors.js';
import { splitFromFile } from './gsm8k.js';
import { resolveDataPath } from './locate.js';
import { loadSource, RecordProblem, type RecordSource, recordStream } from './records.js';
import type { Loaded, LoadOptions, NeutralAs, Prm800kRating, Prm800kRecord } from './types.js';

const Rating = z.union([z.literal(-1), z.literal(0), z.literal(1), z.null()]);

const Completion = z.object({
  text: z.string(),
  rating: Rating.optional().transform((r) => r ?? null),
  flagged: z.boolean().nullable().optional(),
});

const Prm800kRow = z.object({
  labeler: z.string().nullable().optional(),
  is_quality_control_question: z.boolean().optional(),
  is_initial_screening_question: z.boolean().optional(),
  question: z.object({
    problem: z.string().min(1),
    ground_truth_answer: z.string().nullable().optional(),
  }),
  label: z.object({
    steps: z.array(
      z.object({
        completions: z.array(Completion).nullable(),
        human_completion: Completion.nullable().optional(),
        chosen_completion: z.number().int().min(0).nullable(),
      }),
    ),
    finish_reason: z.string().nullable().optional(),
  }),
});

/** Binary label of a PRM800K rating under a neutral convention (null = a human-written step = good). */
export function prm800kLabel(rating: Prm800kRating, neutralAs: NeutralAs): boolean {
  if (rating === 1 || rating === null) return true;
  if (rating === -1) return false;
  return neutralAs === 'positive';
}

/**
 * PRM800K (Lightman et al. 2023) labelling rows: JSONL, or pretty-printed objects one after
 * another (as in the published examples). Each row becomes the trajectory the labeller followed:
 * per step the chosen completion, else the labeller's own completion, else the first completion
 * (the step where labelling stopped). Ratings are kept as given (−1, 0, +1, null); `labels`
 * turns them into booleans with neutral (0) counted as `neutralAs` — default `positive` (the
 * Qwen convention; TRL's converter counts it negative). Ids are `prm800k/<split>/<n>`.
 * Without a path: `<data>/prm800k/<split>.jsonl` (split default `phase2_test`), or split
 * `examples` for `<data>/prm800k-examples/prm800k_examples.jsonl`.
 */
export async function loadPrm800k(options: LoadOptions = {}): Promise<Loaded<Prm800kRecord>> {
  return loadSource(prm800kSource(options));
}

/** {@link loadPrm800k}'s records, read one at a time. */
export function prm800kSource(options: LoadOptions = {}): RecordSource<Prm800kRecord> {
  const neutralAs = options.neutralAs ?? 'positive';
  if (neutralAs !== 'positive' && neutralAs !== 'negative')
    throw new UsageError(`neutralAs must be "positive" or "negative", not "${neutralAs}"`);
  const split = options.split ?? 'phase2_test';
  const path =
    split === 'examples' && options.path === undefined
      ? resolveDataPath('prm800k', undefined, 'prm800k-examples', ['prm800k_examples.jsonl'])
      : resolveDataPath('prm800k', options.path, 'prm800k', [`${split}.jsonl`]);
  const name = options.path ? (options.split ?? splitFromFile(path)) : split;
  const read: RecordSource<Prm800kRecord>['read'] = (hooks) =>
    recordStream(
      path,
      Prm800kRow,
      (row, raw): Prm800kRecord => {
        const steps: string[] = [];
        const ratings: Prm800kRating[] = [];
        row.label.steps.forEach((step, i) => {
          const completions = step.completions ?? [];
          let chosen = step.chosen_completion !== null ? completions[step.chosen_completion] : undefined;
          if (step.chosen_completion !== null && chosen === undefined)
            throw new RecordProblem(
              `label.steps[${i}].chosen_completion`,
              `index ${step.chosen_completion} but the step has ${completions.length} completions`,
            );
          chosen ??= step.human_completion ?? completions[0];
          if (chosen === undefined) return; // an empty step: nothing was written or rated
          steps.push(chosen.text);
          ratings.push(chosen.rating);
        });
        const labels = ratings.map((r) => prm800kLabel(r, neutralAs));
        return {
          id: `prm800k/${name}/${raw.ordinal}`,
          problem: row.question.problem,
          answer: row.question.ground_truth_answer ?? null,
          steps,
          ratings,
          labels,
          firstError: labels.indexOf(false),
          finishReason: row.label.finish_reason ?? null,
          neutralAs,
          labeler: row.labeler ?? null,
          isQualityControlQuestion: row.is_quality_control_question ?? false,
          isInitialScreeningQuestion: row.is_initial_screening_question ?? false,
        };
      },
      { ...options, ...hooks },
    );
  return { path, read };
}
