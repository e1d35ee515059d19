import { UsageError } from '../core/errors.js';
import { createRng, shuffled } from '../core/rng.js';
import { softThresholdOf } from '../label/signals.js';
import type { ChatMessage } from '../models/types.js';
import { renderJudgeMessages } from '../prompts/judge.js';
import { chunkLabel, type LabeledSolution } from './label-file.js';

/** One RL prompt for the StepWiser judge: judge chunk `chunkIndex` of a labeled solution. */
export interface JudgeRlExample {
  /** `<solution id>/<chunk index>`. */
  id: string;
  solutionId: string;
  chunkIndex: number;
  /** The judge prompt (same template the generative judge uses at inference). */
  prompt: ChatMessage[];
  /** The verdict the judge is rewarded for: the chunk's label under the chosen signal. */
  label: 'Positive' | 'Negative';
  problem: string;
  signal: string;
}

export interface JudgeRlOptions {
  /** Which label signal becomes the verdict (e.g. `rel-effective`, `rel-ratio`, `abs-q`). */
  signal: string;
  seed?: number;
  /**
   * Drop prompts longer than this many estimated tokens. StepWiser keeps prompt + answer ≤ 3096
   * tokens; the default leaves ~1k tokens for the judge's analysis.
   */
  maxPromptTokens?: number;
  /** Down-sample the majority class to exactly 50/50 (default true: without it the RL judge collapses to "Positive"). */
  balance?: boolean;
  /** Only chunks up to and including the first negative one (a chunk after an error is judged against a wrong history). Default false. */
  stopAtFirstError?: boolean;
}

export interface JudgeRlSet {
  examples: JudgeRlExample[];
  stats: {
    chunks: number;
    unlabeled: number;
    tooLong: number;
    positivesBefore: number;
    negativesBefore: number;
    positives: number;
    negatives: number;
  };
}

/**
 * Estimated token count: words, numbers and single symbols each count one. Tokenizers of math
 * models land within ~±25% of this on English + LaTeX; it is a filter, not an accounting.
 */
export function estimateTokens(text: string): number {
  const m = text.match(/[A-Za-z]+|\d+|[^\sA-Za-z\d]/g);
  return m ? m.length : 0;
}

/**
 * Build the StepWiser judge RL set (METHODS §6): one prompt per labeled chunk with the problem,
 * the history (previous chunks) and the chunk; the chosen signal's label as the target verdict;
 * the majority class down-sampled (seeded) to exactly 50/50; a length filter.
 */
export function buildJudgeRlSet(rows: readonly LabeledSolution[], options: JudgeRlOptions): JudgeRlSet {
  const maxTokens = options.maxPromptTokens ?? 2048;
  const stats = {
    chunks: 0,
    unlabeled: 0,
    tooLong: 0,
    positivesBefore: 0,
    negativesBefore: 0,
    positives: 0,
    negatives: 0,
  };
  const pos: JudgeRlExample[] = [];
  const neg: JudgeRlExample[] = [];
  // Position in the input, so the balanced set keeps the input's order.
  const seq = new Map<JudgeRlExample, number>();
  let sawSignal = false;
  for (const row of rows) {
    const texts = row.chunks.map((c) => c.text);
    for (let i = 0; i < row.chunks.length; i++) {
      stats.chunks++;
      const label = chunkLabel(row.chunks[i], options.signal, softThresholdOf(row));
      if (label === null) {
        stats.unlabeled++;
        continue;
      }
      sawSignal = true;
      // The prompt the generative judge gets at inference for this solution: under tags, the
      // earlier chunks as the policy's own `<chunk>`s.
      const prompt = renderJudgeMessages({
        problem: row.problem,
        history: texts.slice(0, i),
        chunk: texts[i],
        segmentation: row.segmentation,
      });
      if (estimateTokens(prompt.map((m) => m.content).join('\n')) > maxTokens) {
        stats.tooLong++;
      } else {
        const ex: JudgeRlExample = {
          id: `${row.id}/${i}`,
          solutionId: row.id,
          chunkIndex: i,
          prompt,
          label: label ? 'Positive' : 'Negative',
          problem: row.problem,
          signal: options.signal,
        };
        seq.set(ex, seq.size);
        (label ? pos : neg).push(ex);
      }
      if (options.stopAtFirstError && !label) break;
    }
  }
  if (!sawSignal && rows.length > 0) {
    throw new UsageError(`no chunk has a label for signal "${options.signal}"`);
  }
  stats.positivesBefore = pos.length;
  stats.negativesBefore = neg.length;
  let keepPos = pos;
  let keepNeg = neg;
  if (options.balance ?? true) {
    const rng = createRng(options.seed ?? 0);
    const n = Math.min(pos.length, neg.length);
    // Down-sample only the majority class; keep the chosen examples in their original order.
    const pick = (xs: JudgeRlExample[]) => {
      if (xs.length === n) return xs;
      const keep = new Set(shuffled(xs, rng).slice(0, n));
      return xs.filter((x) => keep.has(x));
    };
    keepPos = pick(pos);
    keepNeg = pick(neg);
  }
  stats.positives = keepPos.length;
  stats.negatives = keepNeg.length;
  const examples = [...keepPos, ...keepNeg].sort((a, b) => seq.get(a)! - seq.get(b)!);
  return { examples, stats };
}
