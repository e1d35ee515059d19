import type { ChatMessage } from '../core/model.js';
import type { PromptInput, PromptReader } from './protocol.js';

/**
 * Outcome model (ORM) prompt: one verdict for a whole solution (METHODS §3, GLoRe §5). The model
 * reasons briefly, then answers `\boxed{Correct}` or `\boxed{Incorrect}`; the score of a solution
 * is the share of Correct over k sampled replies.
 */

const HEAD = 'Here is a math problem and a complete solution.\n\n[Problem]\n';
const SOLUTION_MARK = '\n\n[Solution]\n';
const TAIL =
  '\n\n[Task]\nDecide whether the final answer of the solution is correct. Reason briefly, then answer ' +
  '\\boxed{Correct} or \\boxed{Incorrect}.';

/** The user message of the outcome-model prompt. */
export function renderOrmUserMessage(problem: string, solution: string): string {
  return `${HEAD}${problem}${SOLUTION_MARK}${solution}${TAIL}`;
}

export function renderOrmMessages(problem: string, solution: string): ChatMessage[] {
  return [{ role: 'user', content: renderOrmUserMessage(problem, solution) }];
}

/** Inverse of {@link renderOrmUserMessage}; null when the input is not an outcome-model prompt. */
export function parseOrmPrompt(input: PromptInput): { problem: string; solution: string } | null {
  const text = typeof input === 'string' ? input : (input.find((m) => m.role === 'user')?.content ?? '');
  if (!text.startsWith(HEAD) || !text.endsWith(TAIL)) return null;
  const s = text.indexOf(SOLUTION_MARK, HEAD.length);
  if (s < 0) return null;
  return {
    problem: text.slice(HEAD.length, s),
    solution: text.slice(s + SOLUTION_MARK.length, text.length - TAIL.length),
  };
}

/** The outcome-model prompt's reader (protocol.ts). */
export const ormPromptReader: PromptReader<'orm'> = {
  kind: 'orm',
  family: 'orm',
  read(input) {
    const o = parseOrmPrompt(input);
    return o && { kind: 'orm', problem: o.problem, solution: o.solution };
  },
};

export type OrmVerdictText = 'Correct' | 'Incorrect';

/** The last `\boxed{Correct}` / `\boxed{Incorrect}` of a reply; null = format failure. */
export function parseOrmVerdict(reply: string): OrmVerdictText | null {
  const re = /\\boxed\{\s*(?:\\text\{\s*)?(correct|incorrect)\s*\}?\s*\}/gi;
  let last: OrmVerdictText | null = null;
  for (let m = re.exec(reply); m; m = re.exec(reply))
    last = m[1].toLowerCase() === 'correct' ? 'Correct' : 'Incorrect';
  return last;
}
