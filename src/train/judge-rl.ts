import { UsageError } from '../core/errors.js';
import type { ChatMessage } from '../core/model.js';
import { createRng, shuffled } from '../core/rng.js';
import { softThresholdOf } from '../label/signals.js';
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

export type JudgeRlStats = JudgeRlSet['stats'];

export const emptyJudgeRlStats = (): JudgeRlStats => ({
  chunks: 0,
  unlabeled: 0,
  tooLong: 0,
  positivesBefore: 0,
  negativesBefore: 0,
  positives: 0,
  negatives: 0,
});

/**
 * The judge RL examples of one labeled solution that pass the length filter, in chunk order,
 * counting chunks, unlabeled and too-long ones into `stats`.
 */
export function* judgeRlCandidates(
  row: LabeledSolution,
  options: JudgeRlOptions,
  stats: JudgeRlStats,
): Generator<JudgeRlExample> {
  const maxTokens = options.maxPromptTokens ?? 2048;
  const texts = row.chunks.map((c) => c.text);
  for (let i = 0; i < row.chunks.length; i++) {
    stats.chunks++;
    const label = chunkLabel(row.chunks[i], options.signal, softThresholdOf(row));
    if (label === null) {
      stats.unlabeled++;
      continue;
    }
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
      yield {
        id: `${row.id}/${i}`,
        solutionId: row.id,
        chunkIndex: i,
        prompt,
        label: label ? 'Positive' : 'Negative',
        problem: row.problem,
        signal: options.signal,
      };
    }
    if (options.stopAtFirstError && !label) break;
  }
}

/**
 * Down-sample the majority class (seeded) to the minority's size: `keep` is called with the
 * position of every survivor. `pos` and `neg` are the positions of the candidates of each class.
 * Only positions are involved, so a streaming export balances a file of any size from a few bytes
 * per candidate.
 */
export function markBalancedClasses(
  pos: readonly number[],
  neg: readonly number[],
  seed: number,
  keep: (position: number) => void,
): void {
  const rng = createRng(seed);
  const n = Math.min(pos.length, neg.length);
  for (const xs of [pos, neg]) {
    if (xs.length === n) for (const x of xs) keep(x);
    else for (const x of shuffled(xs, rng).slice(0, n)) keep(x);
  }
}

/**
 * Build the StepWiser judge RL set (METHODS §6): one prompt per labeled chunk with the problem,
 * the history (previous chunks) and the chunk; the chosen signal's label as the target verdict;
 * the majority class down-sampled (seeded) to exactly 50/50; a length filter. The set keeps the
 * input's order.
 */
export function buildJudgeRlSet(rows: readonly LabeledSolution[], options: JudgeRlOptions): JudgeRlSet {
  const stats = emptyJudgeRlStats();
  const candidates: JudgeRlExample[] = [];
  const pos: number[] = [];
  const neg: number[] = [];
  for (const row of rows) {
    for (const ex of judgeRlCandidates(row, options, stats)) {
      (ex.label === 'Positive' ? pos : neg).push(candidates.length);
      candidates.push(ex);
    }
  }
  if (rows.length > 0 && stats.chunks === stats.unlabeled)
    throw new UsageError(`no chunk has a label for signal "${options.signal}"`);
  stats.positivesBefore = pos.length;
  stats.negativesBefore = neg.length;
  let examples = candidates;
  if (options.balance ?? true) {
    const keep = new Uint8Array(candidates.length);
    markBalancedClasses(pos, neg, options.seed ?? 0, (i) => {
      keep[i] = 1;
    });
    examples = candidates.filter((_, i) => keep[i] === 1);
  }
  stats.positives = examples.filter((e) => e.label === 'Positive').length;
  stats.negatives = examples.length - stats.positives;
  return { examples, stats };
}
