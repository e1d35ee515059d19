import pLimit from 'p-limit';
import type { z } from 'zod';
import { addCosts, emptyCost } from '../core/cost.js';
import { createRng } from '../core/rng.js';
import { type Segmentation, splitParagraphs } from '../core/segment.js';
import type { Problem } from '../core/types.js';
import type { SelectOutputRowSchema } from '../data/record-kinds.js';
import { isAbstention, repliesOf } from '../judge/common.js';
import type { StepJudge } from '../judge/types.js';

/** A problem with its sampled responses (the `stepwise sample` output, plus the question). */
export interface SelectionInput {
  id: string;
  question: string;
  samples: Array<{
    text: string;
    correct: boolean;
    chunks?: Array<string | { text: string }>;
    /** How this response is segmented (`stepwise sample` writes it per sample under tags). */
    segmentation?: Segmentation;
  }>;
  /** How the responses were segmented, when the row says it (a sample's own field wins). */
  segmentation?: Segmentation;
}

/** One output line of `stepwise select`, as its strict schema declares (src/data/record-kinds.ts). */
export type SelectionRow = z.infer<typeof SelectOutputRowSchema>;

/**
 * How a row's two picks compare as training data: `text` when the judge's pick is another
 * response text than the outcome-only pick (the two training sets differ on this problem),
 * `copy` when it is another sample with the same text (a policy that writes one solution many
 * times gives many identical correct samples: the sets are then the same on this problem),
 * `same` when it is the same sample, and `none` when the problem has no correct response.
 */
export function pickDifference(
  row: Pick<SelectionRow, 'chosen' | 'outcomeOnly'>,
): 'text' | 'copy' | 'same' | 'none' {
  if (!row.chosen || !row.outcomeOnly) return 'none';
  if (row.chosen.text !== row.outcomeOnly.text) return 'text';
  return row.chosen.index === row.outcomeOnly.index ? 'same' : 'copy';
}

function chunkTexts(s: SelectionInput['samples'][number]): string[] {
  if (s.chunks && s.chunks.length > 0) return s.chunks.map((c) => (typeof c === 'string' ? c : c.text));
  return splitParagraphs(s.text).map((c) => c.text);
}

const mean = (xs: readonly number[]) => (xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : 0);

/**
 * Judge-based data selection (StepWiser, METHODS §6): among a problem's correct responses, keep
 * the one whose chunks have the highest mean judge score; ties go to the earlier response.
 * Incorrect responses are never judged (they cannot be picked).
 */
export async function selectByJudge(
  inputs: readonly SelectionInput[],
  judge: StepJudge,
  options: { seed?: number; concurrency?: number; onProblemDone?: (row: SelectionRow) => void } = {},
): Promise<SelectionRow[]> {
  const limit = pLimit(Math.max(1, options.concurrency ?? 8));
  return Promise.all(
    inputs.map((p) =>
      limit(async () => {
        const problem: Problem = {
          id: p.id,
          question: p.question,
          answer: '',
          domain: 'math',
          source: 'samples',
        };
        const correct = p.samples.map((s, index) => ({ s, index })).filter(({ s }) => s.correct);
        let cost = emptyCost();
        let formatFailures = 0;
        let judgeReplies = 0;
        const candidates: SelectionRow['candidates'] = [];
        const ruled = new Set<number>();
        // Every candidate is put to the judge at once, and all are waited for before a failure
        // is passed on: with batch files every request of the problem is written in one round.
        // Each response is shown to the judge in its own segmentation: tags-segmented samples as
        // `<chunk>` blocks, as the judge saw them in labels and search, not as `[Step i]` blocks.
        const judged = await Promise.allSettled(
          correct.map(({ s }) =>
            judge.judge(problem, chunkTexts(s), {
              segmentation: s.segmentation ?? p.segmentation ?? 'paragraph',
            }),
          ),
        );
        for (const [k, { index }] of correct.entries()) {
          const settled = judged[k];
          if (settled.status === 'rejected') throw settled.reason;
          const result = settled.value;
          cost = addCosts(cost, result.cost);
          formatFailures += result.formatFailures;
          judgeReplies += repliesOf(result);
          const said = result.judgments.filter((j) => !isAbstention(j));
          const abstained = result.judgments.length - said.length;
          if (said.length > 0) ruled.add(index);
          candidates.push({
            index,
            meanScore: mean(said.map((j) => j.score)),
            ...(abstained > 0 ? { abstained } : {}),
          });
        }
        // A response the judge said nothing about is not a pick on its merits.
        let best: (typeof candidates)[number] | null = null;
        for (const c of candidates)
          if (ruled.has(c.index) && (!best || c.meanScore > best.meanScore)) best = c;
        const rng = createRng(`${options.seed ?? 0}:${p.id}`);
        const pick = correct.length ? correct[Math.floor(rng.next() * correct.length)] : null;
        const row: SelectionRow = {
          id: p.id,
          question: p.question,
          chosen: best
            ? { index: best.index, text: p.samples[best.index].text, meanScore: best.meanScore }
            : null,
          outcomeOnly: pick ? { index: pick.index, text: pick.s.text } : null,
          candidates,
          formatFailures,
          judgeReplies,
          cost,
        };
        options.onProblemDone?.(row);
        return row;
      }),
    ),
  );
}
