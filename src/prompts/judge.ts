import type { ChatMessage } from '../core/model.js';
import { parseWrittenTags, type Segmentation, writtenPrefix } from '../core/segment.js';
import type { PromptInput, PromptReader } from './protocol.js';

/**
 * The StepWiser generative judge prompt (METHODS §3): the problem, the historical reasoning
 * path (previous chunks), and the new chunk; the judge writes an analysis, then
 * `\boxed{Positive}` or `\boxed{Negative}`. The same template is used for judging and for the
 * judge RL training set, so a trained judge sees exactly what it was trained on.
 */

const SYSTEM =
  'You are a careful verifier of step-by-step mathematical reasoning. You judge one new reasoning chunk at a time.';

const PROBLEM_MARK = '## Problem\n';
const HISTORY_MARK = '\n\n## Previous reasoning steps\n';
const CHUNK_MARK = '\n\n## New reasoning chunk\n';
const TASK_MARK = '\n\n## Task\n';
const NO_HISTORY = '(none: this is the first chunk)';

/** The judge's instruction (it names both verdict boxes: a reply's verdict is read only after it). */
export const JUDGE_INSTRUCTION =
  'First write a short analysis: state what the new chunk is trying to do, then check its logic and ' +
  'every calculation against the problem and the previous steps. A chunk that only restates or plans ' +
  'without calculating can still be correct. Then give your final judgment of the new chunk alone as ' +
  '\\boxed{Positive} if it is correct and useful, or \\boxed{Negative} if it contains an error.';

export interface JudgePromptInput {
  problem: string;
  history: readonly string[];
  chunk: string;
  /**
   * How the solution was segmented. `tags`: the previous steps are shown as the policy's
   * chunks, each in `<chunk>…</chunk>`; `paragraph` (default): numbered `[Step i]` blocks.
   */
  segmentation?: Segmentation;
}

/** The user message text of the judge prompt. */
export function renderJudgeUserMessage({ problem, history, chunk, segmentation }: JudgePromptInput): string {
  const past =
    history.length === 0
      ? NO_HISTORY
      : segmentation === 'tags'
        ? writtenPrefix(history, 'tags')
        : history.map((h, i) => `[Step ${i + 1}]\n${h}`).join('\n\n');
  return `${PROBLEM_MARK}${problem}${HISTORY_MARK}${past}${CHUNK_MARK}${chunk}${TASK_MARK}${JUDGE_INSTRUCTION}`;
}

export function renderJudgeMessages(input: JudgePromptInput): ChatMessage[] {
  return [
    { role: 'system', content: SYSTEM },
    { role: 'user', content: renderJudgeUserMessage(input) },
  ];
}

/** Inverse of {@link renderJudgeUserMessage}; null when the text is not a judge prompt. */
export function parseJudgePrompt(input: PromptInput): JudgePromptInput | null {
  const text = typeof input === 'string' ? input : (input.find((m) => m.role === 'user')?.content ?? '');
  const p = text.indexOf(PROBLEM_MARK);
  const h = text.indexOf(HISTORY_MARK);
  const c = text.indexOf(CHUNK_MARK);
  const t = text.lastIndexOf(TASK_MARK);
  if (p < 0 || h < 0 || c < 0 || t < 0 || !(p < h && h < c && c < t)) return null;
  const problem = text.slice(p + PROBLEM_MARK.length, h);
  const past = text.slice(h + HISTORY_MARK.length, c);
  const chunk = text.slice(c + CHUNK_MARK.length, t);
  const history: string[] = [];
  if (past.startsWith('<chunk>')) {
    for (const c of parseWrittenTags(past).chunks) history.push(c.text);
    return { problem, history, chunk, segmentation: 'tags' };
  }
  if (past !== NO_HISTORY) {
    const parts = past.split(/(?:^|\n\n)\[Step \d+\]\n/);
    for (const part of parts.slice(1)) history.push(part);
  }
  return { problem, history, chunk };
}

/**
 * The judge prompt's reader (protocol.ts): the user message or the whole text (it finds its
 * sections anywhere, so it goes after the strict readers).
 */
export const judgePromptReader: PromptReader<'judge'> = {
  kind: 'judge',
  family: 'judge',
  read(input) {
    const j = parseJudgePrompt(input);
    return j && { kind: 'judge', problem: j.problem, history: [...j.history], chunk: j.chunk };
  },
};

export type JudgeVerdictText = 'Positive' | 'Negative';

/** The last `\boxed{Positive}` / `\boxed{Negative}` in a judge's reply; null = format failure. */
export function parseJudgeVerdict(reply: string): JudgeVerdictText | null {
  // `\s*(?:\}\s*)?\}`, not `\s*\}?\s*\}`: the two adjacent `\s*` made a verdict followed by many
  // spaces and no brace quadratic to reject.
  const re = /\\boxed\{\s*(?:\\text\{\s*)?(positive|negative)\s*(?:\}\s*)?\}/gi;
  let last: JudgeVerdictText | null = null;
  for (let m = re.exec(reply); m; m = re.exec(reply)) {
    last = m[1].toLowerCase() === 'positive' ? 'Positive' : 'Negative';
  }
  return last;
}
