import type { ChatMessage } from '../core/model.js';

/** GLoRe refinement prompts (METHODS §5): global (rewrite the draft) and local (`[BAD]` marks the first bad step). */

export const BAD_MARKER = '[BAD]';

const GLOBAL_TASK =
  'The draft solution below may contain a mistake. Write a new, correct step-by-step solution. ' +
  'Separate steps with a blank line and put the final answer in \\boxed{}.';
const LOCAL_TASK =
  `The draft solution below contains a mistake at the step marked ${BAD_MARKER}. Keep the steps before the ` +
  'marker, and rewrite the solution from the marked step on. Separate steps with a blank line and put the final answer in \\boxed{}.';

export function renderGlobalRefineMessages(question: string, draft: string): ChatMessage[] {
  return [{ role: 'user', content: `${GLOBAL_TASK}\n\nProblem: ${question}\n\nDraft:\n${draft}` }];
}

/**
 * Local refinement: the draft's chunks with `[BAD]` placed before chunk `firstBad`; the assistant
 * turn starts with the good prefix so the policy continues from it.
 */
export function renderLocalRefineMessages(
  question: string,
  chunks: readonly string[],
  firstBad: number,
): ChatMessage[] {
  const marked = chunks.map((c, i) => (i === firstBad ? `${BAD_MARKER} ${c}` : c)).join('\n\n');
  const goodPrefix = chunks.slice(0, firstBad);
  const messages: ChatMessage[] = [
    { role: 'user', content: `${LOCAL_TASK}\n\nProblem: ${question}\n\nDraft:\n${marked}` },
  ];
  if (goodPrefix.length > 0) messages.push({ role: 'assistant', content: `${goodPrefix.join('\n\n')}\n\n` });
  return messages;
}

/** Recover the parts of a refinement request (for the simulated world and tests). */
export function parseRefinePrompt(
  input: string | ChatMessage[],
): { kind: 'global' | 'local'; question: string; draft: string; prefix: string } | null {
  const msgs: ChatMessage[] = typeof input === 'string' ? [{ role: 'user', content: input }] : input;
  const user = msgs.find((m) => m.role === 'user')?.content ?? '';
  const kind = user.startsWith(GLOBAL_TASK) ? 'global' : user.startsWith(LOCAL_TASK) ? 'local' : null;
  if (!kind) return null;
  const m = /\n\nProblem: ([\s\S]*?)\n\nDraft:\n([\s\S]*)$/.exec(user);
  if (!m) return null;
  const last = msgs[msgs.length - 1];
  return { kind, question: m[1], draft: m[2], prefix: last.role === 'assistant' ? last.content : '' };
}
